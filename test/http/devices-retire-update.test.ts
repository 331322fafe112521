/**
 * After enrollment: retiring a device that will never confirm a wipe (lost, stolen, destroyed), and
 * renaming a device or giving it to another user. Events are read as a webhook receiver gets them.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { checkIn, createDeviceTestApp, enrollDevice, wipeDevice } from "../helpers/devices";
import { clientCertHeader, makeCsr } from "../helpers/pki";
import type { TestApp } from "../helpers/test-app";
import { deliverWebhooks, startWebhookReceiver, verifyBothSignatures } from "../helpers/webhook-receiver";

const SECRET = "device-changes-secret-0123";

const t = await createDeviceTestApp({
  server: { trust_proxy: true },
  webhooks: { allow_private_targets: true },
});
// standardwebhooks checks webhook-timestamp against real time.
if (t.target === "in-process") t.clock.set(new Date());
const receiver = startWebhookReceiver();
afterAll(() => {
  receiver.stop();
  t.close();
});

/** A new organization whose device.retired and device.updated events go to the receiver. */
async function organizationWithWebhook(app: TestApp) {
  const org = await app.createOrganization();
  const webhook = await app.request("POST", "/api/v1/webhooks", {
    token: org.adminToken,
    body: { url: receiver.url, events: ["device.retired", "device.updated"], secret: SECRET },
  });
  expect(webhook.status).toBe(201);
  return org;
}

/** The events the receiver got for one device, in order, after delivering `expected` in all. */
async function receivedFor(deviceId: string, expected: number) {
  await deliverWebhooks(t, receiver, expected);
  return receiver.received.filter((request) => request.payload.data.device_id === deviceId);
}

describe("POST /devices/:id/retire", () => {
  test("a stolen laptop that never confirms its wipe is removed: credentials, peer and pending wipe go, its hardware may enroll again", async () => {
    const org = await organizationWithWebhook(t);
    const admin = org.adminToken;
    const { csr } = makeCsr();
    const hardwareId = `HW-${crypto.randomUUID()}`;
    const laptop = await enrollDevice(t, admin, { hardware_id: hardwareId, csr });
    const certificate = laptop.device_certificate ?? "";
    const wipe = await t.request("POST", `/api/v1/devices/${laptop.id}/wipe`, {
      token: admin,
      body: { reason: "stolen from a car" },
    });
    expect(wipe.status).toBe(202);

    // Delete is refused while the wipe waits, and says what to do instead.
    const refused = await t.request("DELETE", `/api/v1/devices/${laptop.id}`, { token: admin });
    expect(refused.status).toBe(409);
    expect(refused.body.reason).toBe("device_not_wiped");
    expect(refused.body.details).toContain(`/api/v1/devices/${laptop.id}/retire`);

    const retired = await t.request("POST", `/api/v1/devices/${laptop.id}/retire`, {
      token: admin,
      body: { reason: "  stolen, never came back  " },
    });
    expect(retired.status).toBe(200);
    expect(retired.body).toMatchObject({
      id: laptop.id,
      device_name: laptop.device_name,
      hardware_id: hardwareId,
      reason: "stolen, never came back",
      cancelled_wipe_id: wipe.body.wipe_id,
      released_vpn_ip: laptop.vpn_config.address.replace("/32", ""),
      device_tokens_revoked: 1,
      certificates_revoked: 1,
    });

    // Gone from the fleet, and its credentials no longer open anything.
    expect((await t.request("GET", `/api/v1/devices/${laptop.id}`, { token: admin })).status).toBe(404);
    const list = await t.request("GET", "/api/v1/devices", { token: admin });
    expect(list.body.data.map((device: { id: string }) => device.id)).not.toContain(laptop.id);
    expect((await checkIn(t, laptop.device_token)).status).toBe(401);
    const byCertificate = await t.request("POST", "/api/v1/agent/checkin", {
      body: {},
      headers: { "client-cert": clientCertHeader(certificate) },
    });
    expect(byCertificate.status).toBe(401);
    const server = await t.request("GET", "/api/v1/vpn/server-config", { token: admin });
    expect(server.body.peers.map((peer: { device_id: string }) => peer.device_id)).not.toContain(laptop.id);
    expect(server.body.wg_quick).not.toContain(laptop.vpn_config.public_key);

    // The audit log keeps who retired what and why.
    const audit = await t.request("GET", "/api/v1/audit-logs?action=device.retire", { token: admin });
    expect(audit.body.data[0]).toMatchObject({
      action: "device.retire",
      target: { type: "device", id: laptop.id },
      details: {
        hardware_id: hardwareId,
        reason: "stolen, never came back",
        cancelled_wipe_id: wipe.body.wipe_id,
        previous_status: "online",
      },
    });

    // The same hardware (found again, reinstalled) enrolls anew.
    const again = await enrollDevice(t, admin, { hardware_id: hardwareId });
    expect(again.id).not.toBe(laptop.id);

    // A webhook receiver was told, signed.
    const events = await receivedFor(laptop.id, 1);
    expect(events.map((request) => request.payload.event)).toEqual(["device.retired"]);
    expect(events[0]?.payload.data).toEqual({
      device_id: laptop.id,
      device_name: laptop.device_name,
      platform: "macos",
      reason: "stolen, never came back",
      previous_status: "online",
      cancelled_wipe_id: wipe.body.wipe_id,
    });
    expect(await verifyBothSignatures(events[0] as (typeof events)[0], SECRET)).toBe(true);
  });

  test("a suspended device without a pending wipe retires too; a blank reason is a 400", async () => {
    const org = await t.createOrganization();
    const device = await enrollDevice(t, org.adminToken);
    const suspended = await t.request("PUT", `/api/v1/devices/${device.id}/status`, {
      token: org.adminToken,
      body: { status: "suspended", reason: "left the company" },
    });
    expect(suspended.status).toBe(200);
    const blank = await t.request("POST", `/api/v1/devices/${device.id}/retire`, {
      token: org.adminToken,
      body: { reason: "   " },
    });
    expect(blank.status).toBe(400);
    expect(blank.body.errors[0].field).toBe("reason");
    const retired = await t.request("POST", `/api/v1/devices/${device.id}/retire`, {
      token: org.adminToken,
      body: { reason: "destroyed" },
    });
    expect(retired.status).toBe(200);
    expect(retired.body.cancelled_wipe_id).toBeNull();
    expect(retired.body.device_tokens_revoked).toBe(1);
  });

  test("a wiped device is deleted, not retired; an operator may retire; an auditor may not", async () => {
    const org = await t.createOrganization();
    const wiped = await enrollDevice(t, org.adminToken);
    await wipeDevice(t, org.adminToken, wiped);
    const refused = await t.request("POST", `/api/v1/devices/${wiped.id}/retire`, {
      token: org.adminToken,
      body: { reason: "lost" },
    });
    expect(refused.status).toBe(409);
    expect(refused.body.reason).toBe("device_wiped");
    expect(refused.body.details).toContain("DELETE");

    const device = await enrollDevice(t, org.adminToken);
    const auditor = await t.createUser(org.adminToken, "auditor");
    const forbidden = await t.request("POST", `/api/v1/devices/${device.id}/retire`, {
      token: auditor.token,
      body: { reason: "lost" },
    });
    expect(forbidden.status).toBe(403);
    const operator = await t.createUser(org.adminToken, "operator");
    const retired = await t.request("POST", `/api/v1/devices/${device.id}/retire`, {
      token: operator.token,
      body: { reason: "lost" },
    });
    expect(retired.status).toBe(200);
  });

  test("another organization's device is not found, and stays enrolled", async () => {
    const mine = await t.createOrganization();
    const theirs = await t.createOrganization();
    const device = await enrollDevice(t, theirs.adminToken);
    const response = await t.request("POST", `/api/v1/devices/${device.id}/retire`, {
      token: mine.adminToken,
      body: { reason: "lost" },
    });
    expect(response.status).toBe(404);
    expect((await checkIn(t, device.device_token)).status).toBe(200);
  });
});

describe("PATCH /devices/:id", () => {
  test("renames a device and gives it to a user, then to nobody: the page, the list, the log, the audit and a webhook see it", async () => {
    const org = await organizationWithWebhook(t);
    const admin = org.adminToken;
    const member = await t.createUser(admin, "member");
    const device = await enrollDevice(t, admin, { device_name: "MacBook (unboxed)" });

    const renamed = await t.request("PATCH", `/api/v1/devices/${device.id}`, {
      token: admin,
      body: { device_name: "  Finance laptop 12 ", user_id: member.id.toUpperCase() },
    });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({
      id: device.id,
      device_name: "Finance laptop 12",
      user_id: member.id,
    });
    const theirs = await t.request("GET", `/api/v1/devices?user_id=${member.id}`, { token: admin });
    expect(theirs.body.data.map((item: { device_name: string }) => item.device_name)).toEqual([
      "Finance laptop 12",
    ]);

    // The same values again change nothing and tell nobody.
    const unchanged = await t.request("PATCH", `/api/v1/devices/${device.id}`, {
      token: admin,
      body: { device_name: "Finance laptop 12", user_id: member.id },
    });
    expect(unchanged.status).toBe(200);

    const unassigned = await t.request("PATCH", `/api/v1/devices/${device.id}`, {
      token: admin,
      body: { user_id: null },
    });
    expect(unassigned.status).toBe(200);
    expect(unassigned.body).toMatchObject({ device_name: "Finance laptop 12", user_id: null });

    const logs = await t.request("GET", `/api/v1/devices/${device.id}/logs?event=device.updated`, {
      token: admin,
    });
    expect(logs.body.data.map((entry: { details: unknown }) => entry.details)).toEqual([
      { user_id: { from: member.id, to: null } },
      {
        device_name: { from: "MacBook (unboxed)", to: "Finance laptop 12" },
        user_id: { from: null, to: member.id },
      },
    ]);
    const audit = await t.request("GET", "/api/v1/audit-logs?action=device.update", { token: admin });
    expect(audit.body.total).toBe(2);
    expect(audit.body.data[0]).toMatchObject({
      target: { type: "device", id: device.id },
      outcome: "success",
    });

    const events = await receivedFor(device.id, 3);
    expect(events.map((request) => request.payload.data)).toEqual([
      {
        device_id: device.id,
        device_name: "Finance laptop 12",
        platform: "macos",
        changes: {
          device_name: { from: "MacBook (unboxed)", to: "Finance laptop 12" },
          user_id: { from: null, to: member.id },
        },
      },
      {
        device_id: device.id,
        device_name: "Finance laptop 12",
        platform: "macos",
        changes: { user_id: { from: member.id, to: null } },
      },
    ]);
  });

  test("refuses what it cannot do: nothing to change, a blank or unprintable name, a user of another organization, a wiped device", async () => {
    const org = await t.createOrganization();
    const other = await t.createOrganization();
    const device = await enrollDevice(t, org.adminToken);
    const patch = (body: unknown, id = device.id) =>
      t.request("PATCH", `/api/v1/devices/${id}`, { token: org.adminToken, body });

    const empty = await patch({});
    expect(empty.status).toBe(400);
    expect(empty.body.reason).toBe("validation_failed");
    expect((await patch({ device_name: "   " })).status).toBe(400);
    expect((await patch({ device_name: "tab\there" })).status).toBe(400);
    expect((await patch({ device_name: "x".repeat(201) })).status).toBe(400);
    expect((await patch({ user_id: "not-a-user" })).status).toBe(400);
    expect((await patch({ hardware_id: "swap" })).status).toBe(400);

    const stranger = await patch({ user_id: other.adminId });
    expect(stranger.status).toBe(404);
    expect(stranger.body.reason).toBe("user_not_found");
    const page = await t.request("GET", `/api/v1/devices/${device.id}`, { token: org.adminToken });
    expect(page.body.user_id).toBeNull();

    await wipeDevice(t, org.adminToken, device);
    const wiped = await patch({ device_name: "Recycled" });
    expect(wiped.status).toBe(409);
    expect(wiped.body.reason).toBe("device_wiped");

    const auditor = await t.createUser(org.adminToken, "auditor");
    const forbidden = await t.request("PATCH", `/api/v1/devices/${device.id}`, {
      token: auditor.token,
      body: { device_name: "Mine now" },
    });
    expect(forbidden.status).toBe(403);
  });
});
