import { afterAll, describe, expect, test } from "bun:test";
import { Value } from "@sinclair/typebox/value";
import { markOfflineDevices } from "../../src/domain/devices/mark-offline-devices";
import { CheckInResponse } from "../../src/http/routes/agent.schemas";
import {
  checkIn,
  createDeviceTestApp,
  createTestPolicy,
  enrollDevice,
  HEALTHY_FACTS,
  recordedEvents,
} from "../helpers/devices";
import { inProcessTest } from "../helpers/test-app";

const t = await createDeviceTestApp({ devices: { offline_after_seconds: 900 } });
afterAll(() => t.close());

const CHECKIN = "/api/v1/agent/checkin";
const complete = (wipeId: string) => `/api/v1/agent/wipes/${wipeId}/complete`;

async function requestWipe(adminToken: string, deviceId: string, reason = "lost") {
  const response = await t.request("POST", `/api/v1/devices/${deviceId}/wipe`, {
    token: adminToken,
    body: { reason },
  });
  expect(response.status).toBe(202);
  return response.body.wipe_id as string;
}

describe("POST /agent/checkin", () => {
  inProcessTest("updates last_seen, versions and facts; brings an offline device back online", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken);
    t.clock.advanceSeconds(1000);
    expect(
      (await t.request("GET", `/api/v1/devices/${enrolled.id}`, { token: org.adminToken })).body.status,
    ).toBe("online");
    await markOfflineDevices(t.deps);
    expect(
      (await t.request("GET", `/api/v1/devices/${enrolled.id}`, { token: org.adminToken })).body.status,
    ).toBe("offline");

    const response = await checkIn(t, enrolled.device_token, {
      agent_version: "2.0.0",
      os_version: "15.0",
      facts: HEALTHY_FACTS,
    });
    expect(response.status).toBe(200);
    expect(response.body.status).toBe("online");
    const device = await t.request("GET", `/api/v1/devices/${enrolled.id}`, { token: org.adminToken });
    expect(structuredClone(device.body)).toMatchObject({
      status: "online",
      last_seen: t.clock.now().toISOString(),
      agent_version: "2.0.0",
      os_version: "15.0",
      compliance: { status: "compliant" },
    });
  });

  inProcessTest(
    "a check-in that reports the same moves last_seen and the compliance check on, and keeps the rest",
    async () => {
      const org = await t.createOrganization();
      const enrolled = await enrollDevice(t, org.adminToken);
      const report = { agent_version: "2.0.0", os_version: "15.0", facts: HEALTHY_FACTS };
      await checkIn(t, enrolled.device_token, report);
      const read = async () =>
        (await t.request("GET", `/api/v1/devices/${enrolled.id}`, { token: org.adminToken })).body;
      const before = await read();
      t.clock.advanceSeconds(120);
      expect((await checkIn(t, enrolled.device_token, report)).status).toBe(200);
      const after = await read();
      expect(after.last_seen).toBe(t.clock.now().toISOString());
      expect(after.updated_at).toBe(t.clock.now().toISOString());
      expect(after.compliance.last_check).toBe(t.clock.now().toISOString());
      const unchanged = (device: Record<string, unknown>) => {
        const { last_seen, updated_at, compliance, ...rest } = device;
        return { ...rest, compliance: { ...(compliance as object), last_check: null } };
      };
      expect(unchanged(after)).toEqual(unchanged(before));
      // The next report that differs is stored whole.
      t.clock.advanceSeconds(120);
      await checkIn(t, enrolled.device_token, { ...report, os_version: "15.1" });
      expect((await read()).os_version).toBe("15.1");
    },
  );

  test("always answers with the current policy document, and a new version after an assignment", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken);
    const strict = await createTestPolicy(t, org.adminToken, "Strict", {
      dlp: {
        clipboard_sharing: false,
        clipboard_direction: "none",
        screenshot_allowed: false,
        print_allowed: false,
        sensitive_data_patterns: [],
      },
    });
    const before = await checkIn(t, enrolled.device_token, { policy_version: 1 });
    expect(before.body.policy).toMatchObject({ id: enrolled.policy.id, version: 1 });

    const assigned = await t.request("PUT", `/api/v1/devices/${enrolled.id}/policy`, {
      token: org.adminToken,
      body: { policy_id: strict.id },
    });
    expect(assigned.status).toBe(200);
    // Both policies are at version 1: the policy id tells the agent that its version 1 is another policy's.
    const after = await checkIn(t, enrolled.device_token, {
      policy_id: enrolled.policy.id,
      policy_version: 1,
    });
    expect(after.body.policy).toMatchObject({ id: strict.id, name: "Strict", version: 1 });
    expect(after.body.policy.policy_data.dlp.screenshot_allowed).toBe(false);
    const view = await t.request("GET", `/api/v1/devices/${enrolled.id}/policy`, { token: org.adminToken });
    expect(view.body).toMatchObject({ policy_id: strict.id, applied_at: null, applied_version: null });

    await checkIn(t, enrolled.device_token, { policy_id: strict.id, policy_version: 1 });
    const applied = await t.request("GET", `/api/v1/devices/${enrolled.id}/policy`, {
      token: org.adminToken,
    });
    expect(applied.body).toMatchObject({
      policy_id: strict.id,
      applied_version: 1,
      applied_at: expect.any(String),
    });
  });

  inProcessTest(
    "facts are judged against the device's policy; a reported old OS is a critical violation",
    async () => {
      const org = await t.createOrganization();
      const enrolled = await enrollDevice(t, org.adminToken, {
        platform: "windows",
        os_version: "10.0.19045",
      });
      const response = await checkIn(t, enrolled.device_token, {
        os_version: "8.1",
        facts: {
          disk_encrypted: true,
          vpn_connected: false,
          usb_storage_blocked: false,
          usb_devices_blocked: false,
        },
      });
      expect(response.body.compliance).toEqual({
        status: "non_compliant",
        violations: [
          { rule: "os_version", required: ">= 10", actual: "8.1", severity: "critical" },
          { rule: "network.vpn_required", required: true, actual: false, severity: "high" },
          { rule: "storage.external_storage_allowed", required: false, actual: true, severity: "high" },
          { rule: "usb.allowed", required: false, actual: true, severity: "high" },
        ],
        missing: [],
      });
      // Enrolled with an OS version but no facts, the device was unknown until this check-in.
      const [changed] = await recordedEvents(t, org.organizationId, "device.compliance_changed");
      expect(changed?.data).toMatchObject({
        device_id: enrolled.id,
        previous_status: "unknown",
        status: "non_compliant",
      });
    },
  );

  test("a suspended device checks in, stays suspended and still receives its wipe", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken);
    await t.request("PUT", `/api/v1/devices/${enrolled.id}/status`, {
      token: org.adminToken,
      body: { status: "suspended", reason: "investigation" },
    });
    const wipeId = await requestWipe(org.adminToken, enrolled.id);
    const response = await checkIn(t, enrolled.device_token);
    expect(response.status).toBe(200);
    expect(response.body.status).toBe("suspended");
    expect(response.body.commands.map((command: { wipe_id: string }) => command.wipe_id)).toEqual([wipeId]);
  });

  test("answers match the documented CheckInResponse: with violations, a wipe command and a certificate-less device", async () => {
    // The server sends check-in answers without checking them against their schema (jsonAnswer): this
    // is where an answer that drifted from the OpenAPI document would show.
    const org = await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken, { platform: "windows", os_version: "10.0.19045" });
    const answers = [
      await checkIn(t, enrolled.device_token),
      await checkIn(t, enrolled.device_token, {
        os_version: "8.1",
        facts: { disk_encrypted: false, vpn_connected: false, usb_storage_blocked: false },
      }),
    ];
    await requestWipe(org.adminToken, enrolled.id);
    answers.push(await checkIn(t, enrolled.device_token, { facts: HEALTHY_FACTS }));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200, 200]);
    expect(answers[1]?.body.compliance.violations.length).toBeGreaterThan(0);
    expect(answers[2]?.body.commands).toHaveLength(1);
    for (const answer of answers) {
      expect([...Value.Errors(CheckInResponse, answer.body)]).toEqual([]);
      // Nor a field the schema does not list (Elysia's normaliser used to drop those from the answer).
      expect(Value.Clean(CheckInResponse, structuredClone(answer.body))).toEqual(answer.body);
    }
  });

  test("400 naming an invalid field", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken);
    for (const [body, field] of [
      [{ policy_version: 0 }, "policy_version"],
      [{ policy_version: "1" }, "policy_version"],
      [{ facts: { disk_encrypted: "yes" } }, "facts.disk_encrypted"],
      [{ agent_version: "" }, "agent_version"],
      [{ policy_id: "abc" }, "policy_id"],
    ] as const) {
      const response = await checkIn(t, enrolled.device_token, body);
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(response.body.errors.map((error: { field: string }) => error.field)).toContain(field);
    }
  });

  test("a body that is not a JSON object is 400 naming body; without a token it is still 401", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken);
    for (const rawBody of ["[]", "[1]", "5", '"hello"', "true"]) {
      const response = await t.request("POST", CHECKIN, { token: enrolled.device_token, rawBody });
      expect(response.status, rawBody).toBe(400);
      expect(response.body.errors, rawBody).toEqual([
        expect.objectContaining({ field: "body", message: "must be a JSON object" }),
      ]);
    }
    expect((await t.request("POST", CHECKIN, { rawBody: "[]" })).status).toBe(401);
    // Nothing was recorded for the refused check-ins.
    const logs = await t.request("GET", `/api/v1/devices/${enrolled.id}/logs?event=device.checkin`, {
      token: org.adminToken,
    });
    expect(logs.body.total).toBe(0);
    expect((await t.request("POST", CHECKIN, { token: enrolled.device_token })).status).toBe(200);
  });

  test("facts a newer agent knows and this server does not are ignored, not refused", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken);
    const response = await checkIn(t, enrolled.device_token, {
      facts: { ...HEALTHY_FACTS, teleport_enabled: true },
    });
    expect(response.status).toBe(200);
    const logs = await t.request("GET", `/api/v1/devices/${enrolled.id}/logs?event=device.checkin`, {
      token: org.adminToken,
    });
    expect(logs.body.data[0].details.facts).toEqual(HEALTHY_FACTS);
  });

  test("a misspelled fact is kept, named in ignored_facts and not judged; the device shows both", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken);
    const { disk_encrypted: _, ...others } = HEALTHY_FACTS;
    const response = await checkIn(t, enrolled.device_token, {
      facts: { ...others, diskEncrypted: true, kernel: "6.8.0" },
    });
    expect(response.status).toBe(200);
    expect(response.body.ignored_facts).toEqual(["diskEncrypted", "kernel"]);
    // The policy needs disk encryption, and the fact that says so was misspelled: it could not be checked.
    expect(response.body.compliance.missing).toContain("storage.encryption_required");
    const device = await t.request("GET", `/api/v1/devices/${enrolled.id}`, { token: org.adminToken });
    expect(device.body.facts).toEqual(others);
    expect(device.body.ignored_facts).toEqual({ diskEncrypted: true, kernel: "6.8.0" });
    // Spelled right the next time, nothing is ignored any more.
    const fixed = await checkIn(t, enrolled.device_token, { facts: HEALTHY_FACTS });
    expect(fixed.body.ignored_facts).toEqual([]);
    expect(fixed.body.compliance.missing).not.toContain("storage.encryption_required");
    const after = await t.request("GET", `/api/v1/devices/${enrolled.id}`, { token: org.adminToken });
    expect([after.body.facts, after.body.ignored_facts]).toEqual([HEALTHY_FACTS, null]);
  });

  test("unknown facts are bounded: a value that is not a scalar, a long name or too many facts is a 400", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken);
    const tooMany = Object.fromEntries(Array.from({ length: 65 }, (_, index) => [`fact_${index}`, true]));
    for (const [facts, field] of [
      [{ secure_boot: { state: "on" } }, "facts.secure_boot"],
      [{ kernel: "x".repeat(201) }, "facts.kernel"],
      [{ ["n".repeat(65)]: true }, `facts.${"n".repeat(64)}…`],
      [tooMany, "facts"],
    ] as const) {
      const response = await checkIn(t, enrolled.device_token, { facts });
      expect([field, response.status]).toEqual([field, 400]);
      expect(response.body.errors.map((error: { field: string }) => error.field)).toContain(field);
    }
    const device = await t.request("GET", `/api/v1/devices/${enrolled.id}`, { token: org.adminToken });
    expect([device.body.facts, device.body.ignored_facts]).toEqual([null, null]);
  });

  test("the enforcement report is stored and shown on the device with its time; bad entries are a 400", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken);
    const device = () => t.request("GET", `/api/v1/devices/${enrolled.id}`, { token: org.adminToken });
    expect((await device()).body.enforcement).toBeNull();
    const enforcement = [
      { setting: "usb.allowed", outcome: "enforced" },
      { setting: "dlp.screenshot_allowed", outcome: "unsupported", detail: "no compositor hook on Linux" },
      { setting: "tunnel", outcome: "failed", detail: "wg-quick up: RTNETLINK answers: File exists" },
      { setting: "storage.encryption_required", outcome: "reported" },
    ];
    const response = await checkIn(t, enrolled.device_token, { enforcement });
    expect(response.status).toBe(200);
    const shown = (await device()).body;
    expect(shown.enforcement).toEqual({ reported_at: shown.last_seen, settings: enforcement });
    for (const [entry, field] of [
      [{ setting: "usb.allowed", outcome: "maybe" }, "enforcement.0.outcome"],
      [{ setting: "USB allowed", outcome: "enforced" }, "enforcement.0.setting"],
      [{ setting: "tunnel", outcome: "failed", detail: "x".repeat(501) }, "enforcement.0.detail"],
      [{ outcome: "enforced" }, "enforcement.0.setting"],
    ] as const) {
      const refused = await checkIn(t, enrolled.device_token, { enforcement: [entry] });
      expect([field, refused.status]).toEqual([field, 400]);
      expect(refused.body.errors.map((error: { field: string }) => error.field)).toContain(field);
    }
    const tooLong = Array.from({ length: 65 }, () => ({ setting: "tunnel", outcome: "enforced" }));
    expect((await checkIn(t, enrolled.device_token, { enforcement: tooLong })).status).toBe(400);
    expect((await device()).body.enforcement.settings).toEqual(enforcement);
  });

  inProcessTest(
    "an enforcement report identical to the last one is a heartbeat; a changed one is logged",
    async () => {
      const org = await t.createOrganization();
      const enrolled = await enrollDevice(t, org.adminToken);
      const report = {
        os_version: "15.0",
        facts: { ...HEALTHY_FACTS, secure_boot: true },
        enforcement: [{ setting: "usb.allowed", outcome: "enforced" }],
      };
      const read = async () =>
        (await t.request("GET", `/api/v1/devices/${enrolled.id}`, { token: org.adminToken })).body;
      const checkIns = async () =>
        (
          await t.request("GET", `/api/v1/devices/${enrolled.id}/logs?event=device.checkin`, {
            token: org.adminToken,
          })
        ).body;
      await checkIn(t, enrolled.device_token, report);
      const before = await read();
      expect((await checkIns()).total).toBe(1);
      t.clock.advanceSeconds(120);
      expect((await checkIn(t, enrolled.device_token, report)).body.ignored_facts).toEqual(["secure_boot"]);
      const after = await read();
      const now = t.clock.now().toISOString();
      expect([after.last_seen, after.updated_at, after.enforcement.reported_at]).toEqual([now, now, now]);
      const unchanged = (device: Record<string, unknown>) => {
        const { last_seen, updated_at, compliance, enforcement, ...rest } = device;
        return { ...rest, settings: (enforcement as { settings: unknown }).settings };
      };
      expect(unchanged(after)).toEqual(unchanged(before));
      // Inside the log interval, the same report is not logged again.
      expect((await checkIns()).total).toBe(1);

      t.clock.advanceSeconds(120);
      const changed = [{ setting: "usb.allowed", outcome: "failed", detail: "usbguard is not installed" }];
      await checkIn(t, enrolled.device_token, { ...report, enforcement: changed });
      const logged = await checkIns();
      expect(logged.total).toBe(2);
      expect(logged.data[0].details).toMatchObject({
        enforcement: changed,
        ignored_facts: { secure_boot: true },
      });
      expect((await read()).enforcement.settings).toEqual(changed);
    },
  );

  inProcessTest(
    "a change of violations logs device.compliance_changed though the device stays non_compliant",
    async () => {
      const org = await t.createOrganization();
      const enrolled = await enrollDevice(t, org.adminToken, {
        platform: "windows",
        os_version: "10.0.19045",
      });
      const vpnDown = { ...HEALTHY_FACTS, vpn_connected: false };
      await checkIn(t, enrolled.device_token, { facts: vpnDown });
      const changes = async () => await recordedEvents(t, org.organizationId, "device.compliance_changed");
      expect(await changes()).toHaveLength(1);
      // The same report again changes nothing: no event.
      await checkIn(t, enrolled.device_token, { facts: vpnDown });
      expect(await changes()).toHaveLength(1);
      // Another rule broken too: still non_compliant, but the violations changed.
      await checkIn(t, enrolled.device_token, { facts: { ...vpnDown, usb_devices_blocked: false } });
      expect(await changes()).toHaveLength(2);
      expect((await changes())[1]?.data).toMatchObject({
        previous_status: "non_compliant",
        status: "non_compliant",
        previous_violations: [{ rule: "network.vpn_required" }],
        violations: [{ rule: "network.vpn_required" }, { rule: "usb.allowed" }],
      });
      const logged = await t.request(
        "GET",
        `/api/v1/devices/${enrolled.id}/logs?event=device.compliance_changed`,
        { token: org.adminToken },
      );
      expect(logged.body.total).toBe(2);
    },
  );

  test("401 without a device token, with a user's token, or with an unknown one", async () => {
    const org = await t.createOrganization();
    expect((await t.request("POST", CHECKIN, { body: {} })).status).toBe(401);
    const asAdmin = await t.request("POST", CHECKIN, { token: org.adminToken, body: {} });
    expect(asAdmin.status).toBe(401);
    expect(asAdmin.body.details).toBe("agent endpoints need a device token or a device certificate");
    expect((await checkIn(t, "bwd_unknown")).status).toBe(401);
  });

  test("a device token opens no administrator endpoint", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken);
    const response = await t.request("GET", `/api/v1/devices/${enrolled.id}`, {
      token: enrolled.device_token,
    });
    expect(response.status).toBe(401);
  });
});

describe("devices.min_os_versions", () => {
  test("a Linux device is judged against its distribution's minimum; others have none", async () => {
    const strict = await createDeviceTestApp({
      devices: { min_os_versions: { ubuntu: "22.04", windows: "10.0.22000" } },
    });
    try {
      const org = await strict.createOrganization();
      const linux = await enrollDevice(strict, org.adminToken, {
        platform: "linux",
        os_version: "ubuntu 22.04",
      });
      const osViolations = async (os_version: string) =>
        (await checkIn(strict, linux.device_token, { os_version })).body.compliance.violations.filter(
          (violation: { rule: string }) => violation.rule === "os_version",
        );
      expect(await osViolations("ubuntu 20.04")).toEqual([
        { rule: "os_version", required: ">= 22.04", actual: "ubuntu 20.04", severity: "critical" },
      ]);
      expect(await osViolations("ubuntu 22.04")).toEqual([]);
      expect(await osViolations("ubuntu 24.10")).toEqual([]);
      // A distribution without a configured minimum has none.
      expect(await osViolations("debian 11")).toEqual([]);
      const device = await strict.request("GET", `/api/v1/devices/${linux.id}`, { token: org.adminToken });
      expect(device.body.compliance.violations).toEqual([]);
      // A platform's configured minimum replaces its built-in one (10): Windows 10 is below 10.0.22000.
      const windows = await enrollDevice(strict, org.adminToken, {
        platform: "windows",
        os_version: "10.0.22631",
      });
      const old = await checkIn(strict, windows.device_token, { os_version: "10.0.19045" });
      expect(old.body.compliance.violations).toContainEqual({
        rule: "os_version",
        required: ">= 10.0.22000",
        actual: "10.0.19045",
        severity: "critical",
      });
    } finally {
      await strict.close();
    }
  });
});

describe("POST /agent/wipes/:wipe_id/complete", () => {
  inProcessTest("success: the device is wiped and its token stops working", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken);
    const wipeId = await requestWipe(org.adminToken, enrolled.id);
    const response = await t.request("POST", complete(wipeId), {
      token: enrolled.device_token,
      body: { success: true },
    });
    expect(response.status).toBe(200);
    expect(structuredClone(response.body)).toMatchObject({
      wipe_id: wipeId,
      device_id: enrolled.id,
      status: "completed",
      completed_at: t.clock.now().toISOString(),
      error: null,
    });
    const refused = await checkIn(t, enrolled.device_token);
    expect(refused.status).toBe(401);
    const [wiped] = await recordedEvents(t, org.organizationId, "device.wiped");
    expect(wiped?.data).toMatchObject({ device_id: enrolled.id, wipe_id: wipeId, platform: "macos" });
  });

  test("failure: the wipe fails, the device keeps its status, and a new wipe can be requested", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken);
    const wipeId = await requestWipe(org.adminToken, enrolled.id);
    const response = await t.request("POST", complete(wipeId), {
      token: enrolled.device_token,
      body: { success: false, error: "device administrator rights revoked" },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ status: "failed", error: "device administrator rights revoked" });
    const polled = await t.request("GET", `/api/v1/devices/${enrolled.id}/wipe/${wipeId}`, {
      token: org.adminToken,
    });
    expect(polled.body).toMatchObject({ status: "failed", error: "device administrator rights revoked" });
    expect(
      (await t.request("GET", `/api/v1/devices/${enrolled.id}`, { token: org.adminToken })).body.status,
    ).toBe("online");
    expect((await checkIn(t, enrolled.device_token)).body.commands).toEqual([]);
    await requestWipe(org.adminToken, enrolled.id, "second try");
  });

  test("409 for a wipe that is no longer pending, state unchanged", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken);
    const wipeId = await requestWipe(org.adminToken, enrolled.id);
    await t.request("POST", complete(wipeId), { token: enrolled.device_token, body: { success: false } });
    const again = await t.request("POST", complete(wipeId), {
      token: enrolled.device_token,
      body: { success: true },
    });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({
      reason: "wipe_not_pending",
      details: "the wipe is already failed",
    });
    expect(
      (await t.request("GET", `/api/v1/devices/${enrolled.id}`, { token: org.adminToken })).body.status,
    ).toBe("online");
  });

  test("404 for another device's wipe or an unknown one; 400 without success; 401 without a token", async () => {
    const org = await t.createOrganization();
    const first = await enrollDevice(t, org.adminToken);
    const second = await enrollDevice(t, org.adminToken);
    const wipeId = await requestWipe(org.adminToken, first.id);
    const stolen = await t.request("POST", complete(wipeId), {
      token: second.device_token,
      body: { success: true },
    });
    expect(stolen.status).toBe(404);
    expect(stolen.body.reason).toBe("wipe_not_found");
    const unknown = await t.request("POST", complete(crypto.randomUUID()), {
      token: first.device_token,
      body: { success: true },
    });
    expect(unknown.status).toBe(404);
    const invalid = await t.request("POST", complete(wipeId), { token: first.device_token, body: {} });
    expect(invalid.status).toBe(400);
    expect(invalid.body.errors[0].field).toBe("success");
    expect((await t.request("POST", complete(wipeId), { body: { success: true } })).status).toBe(401);
    expect(
      (await t.request("GET", `/api/v1/devices/${first.id}`, { token: org.adminToken })).body.status,
    ).toBe("online");
  });
});
