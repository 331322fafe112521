import { afterAll, describe, expect, test } from "bun:test";
import { and, eq } from "drizzle-orm";
import { withTransaction } from "../../src/db/client";
import { firstRow } from "../../src/db/first-row";
import { devices, enrollmentTokens, events } from "../../src/db/tables";
import { findPolicyTemplate } from "../../src/domain/policies/policy-templates";
import { createTestApp, inProcessTest } from "../helpers/test-app";

const t = await createTestApp();
afterAll(() => t.close());

type DeviceRow = typeof devices.$inferInsert;

let deviceCounter = 0;
/** Puts a device row straight into the database (the devices API is tested on its own). */
async function insertDevice(organizationId: string, fields: Partial<DeviceRow> = {}): Promise<string> {
  const id = crypto.randomUUID();
  const now = t.clock.now().toISOString();
  deviceCounter += 1;
  await withTransaction(
    t.deps.db,
    async (tx) =>
      await tx.insert(devices).values({
        id,
        organizationId,
        deviceName: `device-${deviceCounter}`,
        platform: "linux",
        agentVersion: "1.0.0",
        hardwareId: `hw-${id}`,
        status: "online",
        lastSeen: now,
        enrolledAt: now,
        vpnPublicKey: `test-public-key-${id}`,
        createdAt: now,
        updatedAt: now,
        ...fields,
      }),
  );
  return id;
}

async function eventsOf(organizationId: string, type: string) {
  return (
    await t.deps.db
      .select({ data: events.data })
      .from(events)
      .where(and(eq(events.organizationId, organizationId), eq(events.type, type)))
  ).map((event) => event.data);
}

async function setUp() {
  const org = await t.createOrganization();
  const token = org.adminToken;
  const defaultPolicy = (await t.request("GET", "/api/v1/policies/default", { token })).body;
  const created = await t.request("POST", "/api/v1/policies", { token, body: { name: "Engineering" } });
  return { org, token, defaultPolicyId: defaultPolicy.id as string, policyId: created.body.id as string };
}

async function deviceCountOf(token: string, policyId: string): Promise<number> {
  return (await t.request("GET", `/api/v1/policies/${policyId}`, { token })).body.device_count;
}

describe("device_count", () => {
  inProcessTest(
    "counts assigned devices; the default also counts devices without a policy; never wiped ones",
    async () => {
      const { org, token, defaultPolicyId, policyId } = await setUp();
      await insertDevice(org.organizationId, { policyId });
      await insertDevice(org.organizationId, { policyId, status: "suspended" });
      await insertDevice(org.organizationId, { policyId, status: "wiped" });
      await insertDevice(org.organizationId);
      await insertDevice(org.organizationId, { status: "offline" });
      await insertDevice(org.organizationId, { policyId: defaultPolicyId });
      await insertDevice(org.organizationId, { status: "wiped" });

      expect(await deviceCountOf(token, policyId)).toBe(2);
      expect(await deviceCountOf(token, defaultPolicyId)).toBe(3);
      const list = await t.request("GET", "/api/v1/policies", { token });
      const counts = Object.fromEntries(
        list.body.data.map((item: { id: string; device_count: number }) => [item.id, item.device_count]),
      );
      expect(counts).toEqual({ [policyId]: 2, [defaultPolicyId]: 3 });
    },
  );
});

describe("GET /api/v1/policies/:id/devices", () => {
  inProcessTest("lists the devices that follow the policy, with the version each last applied", async () => {
    const { org, token, defaultPolicyId, policyId } = await setUp();
    const synced = await insertDevice(org.organizationId, {
      policyId,
      appliedPolicyId: policyId,
      appliedPolicyVersion: 1,
      policyAppliedAt: "2026-11-01T12:05:00.000Z",
    });
    t.clock.advanceSeconds(60);
    const moved = await insertDevice(org.organizationId, {
      policyId,
      status: "offline",
      appliedPolicyId: defaultPolicyId,
      appliedPolicyVersion: 1,
      policyAppliedAt: "2026-11-01T12:01:00.000Z",
    });
    t.clock.advanceSeconds(60);
    const fresh = await insertDevice(org.organizationId, { policyId, status: "pending" });
    await insertDevice(org.organizationId, { policyId, status: "wiped" });
    await insertDevice(org.organizationId);

    const response = await t.request("GET", `/api/v1/policies/${policyId}/devices`, { token });
    expect(response.status).toBe(200);
    expect(response.body.total).toBe(3);
    const byId = Object.fromEntries(response.body.data.map((entry: { id: string }) => [entry.id, entry]));
    expect(byId[synced]).toMatchObject({
      status: "online",
      policy_version: 1,
      last_sync: "2026-11-01T12:05:00.000Z",
    });
    expect(byId[synced].device_name).toMatch(/^device-\d+$/);
    // A version applied under another policy says nothing about this one.
    expect(byId[moved]).toMatchObject({ status: "offline", policy_version: null, last_sync: null });
    expect(byId[fresh]).toMatchObject({ status: "pending", policy_version: null, last_sync: null });

    const page = await t.request("GET", `/api/v1/policies/${policyId}/devices?page=2&page_size=2`, { token });
    expect(page.body).toMatchObject({ total: 3, page: 2, page_size: 2 });
    expect(page.body.data.map((entry: { id: string }) => entry.id)).toEqual([synced]);
  });

  inProcessTest("the default policy lists devices without a policy of their own", async () => {
    const { org, token, defaultPolicyId, policyId } = await setUp();
    const unassigned = await insertDevice(org.organizationId);
    await insertDevice(org.organizationId, { policyId });
    const response = await t.request("GET", `/api/v1/policies/${defaultPolicyId}/devices`, { token });
    expect(response.body.data.map((entry: { id: string }) => entry.id)).toEqual([unassigned]);
  });
});

describe("the default policy's devices: assigned to it, or without a policy", () => {
  inProcessTest("are listed and counted together, newest enrollment first, across pages", async () => {
    const { org, token, defaultPolicyId, policyId } = await setUp();
    // Enrollment times interleave the two kinds, so each page mixes both index ranges.
    const expected: string[] = [];
    for (let index = 0; index < 7; index++) {
      t.clock.advanceSeconds(1);
      expected.unshift(
        await insertDevice(org.organizationId, index % 2 === 0 ? {} : { policyId: defaultPolicyId }),
      );
    }
    await insertDevice(org.organizationId, { policyId });
    await insertDevice(org.organizationId, { status: "wiped" });
    await insertDevice(org.organizationId, { policyId: defaultPolicyId, status: "wiped" });

    const seen: string[] = [];
    for (let page = 1; page <= 3; page++) {
      const response = await t.request(
        "GET",
        `/api/v1/policies/${defaultPolicyId}/devices?page=${page}&page_size=3`,
        { token },
      );
      expect(response.body).toMatchObject({ total: 7, page, total_pages: 3 });
      seen.push(...response.body.data.map((entry: { id: string }) => entry.id));
    }
    expect(seen).toEqual(expected);
    expect(await deviceCountOf(token, defaultPolicyId)).toBe(7);
    expect(await deviceCountOf(token, policyId)).toBe(1);
  });
});

describe("deleting a policy with devices", () => {
  inProcessTest("its devices fall back to the default policy and are counted", async () => {
    const { org, token, defaultPolicyId, policyId } = await setUp();
    const first = await insertDevice(org.organizationId, { policyId });
    const second = await insertDevice(org.organizationId, { policyId, status: "offline" });
    const wiped = await insertDevice(org.organizationId, { policyId, status: "wiped" });
    await insertDevice(org.organizationId);
    const [token1] = await withTransaction(
      t.deps.db,
      async (tx) =>
        await tx
          .insert(enrollmentTokens)
          .values({
            id: crypto.randomUUID(),
            organizationId: org.organizationId,
            tokenHash: `hash-${crypto.randomUUID()}`,
            expiresAt: "2027-01-01T00:00:00.000Z",
            policyId,
            createdBy: org.adminId,
            createdAt: t.clock.now().toISOString(),
          })
          .returning({ id: enrollmentTokens.id }),
    );

    const response = await t.request("DELETE", `/api/v1/policies/${policyId}`, { token });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ affected_devices: 2, fallback_policy: defaultPolicyId });

    expect(await deviceCountOf(token, defaultPolicyId)).toBe(3);
    const followers = await t.request("GET", `/api/v1/policies/${defaultPolicyId}/devices`, { token });
    expect(followers.body.data.map((entry: { id: string }) => entry.id)).toEqual(
      expect.arrayContaining([first, second]),
    );
    const rows = await t.deps.db.select({ id: devices.id, policyId: devices.policyId }).from(devices);
    expect(rows.filter((row) => [first, second, wiped].includes(row.id)).map((row) => row.policyId)).toEqual([
      null,
      null,
      null,
    ]);
    const enrollment = await firstRow(
      t.deps.db
        .select({ policyId: enrollmentTokens.policyId })
        .from(enrollmentTokens)
        .where(eq(enrollmentTokens.id, token1?.id ?? "")),
    );
    expect(enrollment?.policyId).toBeNull();
    expect(await eventsOf(org.organizationId, "policy.deleted")).toEqual([
      { policy_id: policyId, name: "Engineering", affected_devices: 2, fallback_policy: defaultPolicyId },
    ]);
  });
});

describe("a change of settings re-evaluates the devices that follow the policy", () => {
  inProcessTest("requiring encryption makes an unencrypted device non-compliant", async () => {
    const { org, token, policyId } = await setUp();
    await t.request("PUT", `/api/v1/policies/${policyId}`, {
      token,
      body: { policy_data: { storage: { encryption_required: false }, network: { vpn_required: false } } },
    });
    const device = await insertDevice(org.organizationId, {
      policyId,
      osVersion: "6.8",
      facts: { disk_encrypted: false },
      complianceStatus: "compliant",
    });
    await t.request("PUT", `/api/v1/policies/${policyId}`, {
      token,
      body: { policy_data: { storage: { encryption_required: true } } },
    });
    const row = await firstRow(
      t.deps.db
        .select({ complianceStatus: devices.complianceStatus })
        .from(devices)
        .where(eq(devices.id, device)),
    );
    expect(row?.complianceStatus).toBe("non_compliant");
    expect(await eventsOf(org.organizationId, "device.compliance_changed")).toEqual([
      expect.objectContaining({ device_id: device, previous_status: "compliant", status: "non_compliant" }),
    ]);
  });
});

describe("re-evaluation after a policy change", () => {
  const deviceRow = async (id: string) =>
    await firstRow(t.deps.db.select().from(devices).where(eq(devices.id, id)));

  inProcessTest(
    "a device that has reported nothing stays unknown with no last_check; a reporting one is checked",
    async () => {
      const { org, token, policyId } = await setUp();
      const silent = await insertDevice(org.organizationId, { policyId });
      const reporting = await insertDevice(org.organizationId, {
        policyId,
        osVersion: "6.8",
        facts: {
          disk_encrypted: true,
          vpn_connected: true,
          usb_storage_blocked: true,
          usb_devices_blocked: true,
        },
      });
      t.clock.advanceSeconds(60);
      await t.request("PUT", `/api/v1/policies/${policyId}`, {
        token,
        body: { policy_data: { network: { vpn_required: false } } },
      });
      expect(await deviceRow(silent)).toMatchObject({
        complianceStatus: "unknown",
        complianceCheckedAt: null,
        complianceStale: false,
      });
      expect(await deviceRow(reporting)).toMatchObject({
        complianceStatus: "compliant",
        complianceCheckedAt: t.clock.now().toISOString(),
        complianceMissing: [],
        complianceStale: false,
      });
    },
  );

  inProcessTest(
    "deleting a policy re-evaluates only the devices that fell back, against the default",
    async () => {
      const { org, token, policyId } = await setUp();
      await t.request("PUT", `/api/v1/policies/${policyId}`, {
        token,
        body: { policy_data: { storage: { encryption_required: false } } },
      });
      const facts = {
        disk_encrypted: false,
        vpn_connected: true,
        usb_storage_blocked: true,
        usb_devices_blocked: true,
      };
      const fallsBack = await insertDevice(org.organizationId, { policyId, facts, complianceStale: false });
      // Already on the default and fresh: nothing changed for it, so it is not touched.
      const alreadyDefault = await insertDevice(org.organizationId, {
        facts,
        complianceStatus: "compliant",
        complianceStale: false,
      });
      await t.request("DELETE", `/api/v1/policies/${policyId}`, { token });
      expect(await deviceRow(fallsBack)).toMatchObject({
        complianceStatus: "non_compliant",
        complianceStale: false,
      });
      expect((await deviceRow(alreadyDefault))?.complianceStatus).toBe("compliant");
      expect(
        (await eventsOf(org.organizationId, "device.compliance_changed")).map(
          (data) => (data as { device_id: string }).device_id,
        ),
      ).toEqual([fallsBack]);
    },
  );

  inProcessTest("a new default re-evaluates the devices without a policy against it", async () => {
    const { org, token, policyId } = await setUp();
    await t.request("PUT", `/api/v1/policies/${policyId}`, {
      token,
      body: { policy_data: { storage: { encryption_required: false } } },
    });
    const facts = {
      disk_encrypted: false,
      vpn_connected: true,
      usb_storage_blocked: true,
      usb_devices_blocked: true,
    };
    const unassigned = await insertDevice(org.organizationId, { facts, complianceStatus: "non_compliant" });
    await t.request("PUT", "/api/v1/policies/default", { token, body: { policy_id: policyId } });
    expect(await deviceRow(unassigned)).toMatchObject({
      complianceStatus: "compliant",
      complianceStale: false,
    });
  });
});

describe("the organization default", () => {
  test("GET /default returns the full default policy", async () => {
    const { token, defaultPolicyId } = await setUp();
    const response = await t.request("GET", "/api/v1/policies/default", { token });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      id: defaultPolicyId,
      name: "Default policy",
      is_default: true,
      version: 1,
    });
    expect(response.body.policy_data).toEqual(findPolicyTemplate("balanced")?.policy_data);
  });

  inProcessTest(
    "PUT /default makes another policy the default; devices without a policy follow it",
    async () => {
      const { org, token, defaultPolicyId, policyId } = await setUp();
      await insertDevice(org.organizationId);
      await insertDevice(org.organizationId);
      await insertDevice(org.organizationId, { policyId: defaultPolicyId });

      const response = await t.request("PUT", "/api/v1/policies/default", {
        token,
        body: { policy_id: policyId },
      });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({
        id: policyId,
        name: "Engineering",
        is_default: true,
        device_count: 2,
      });
      expect((await t.request("GET", "/api/v1/policies/default", { token })).body.id).toBe(policyId);
      const former = await t.request("GET", `/api/v1/policies/${defaultPolicyId}`, { token });
      expect(former.body).toMatchObject({ is_default: false, device_count: 1 });
      expect(await eventsOf(org.organizationId, "policy.assigned")).toEqual([
        {
          policy_id: policyId,
          name: "Engineering",
          scope: "organization_default",
          previous_policy_id: defaultPolicyId,
        },
      ]);
      const audit = await t.request("GET", "/api/v1/audit-logs?action=policy.set_default", { token });
      expect(audit.body.data[0]).toMatchObject({ target: { type: "policy", id: policyId } });

      // The new default can no longer be deleted; the former one now can.
      expect((await t.request("DELETE", `/api/v1/policies/${policyId}`, { token })).status).toBe(409);
      const deleted = await t.request("DELETE", `/api/v1/policies/${defaultPolicyId}`, { token });
      expect(deleted.body).toMatchObject({ affected_devices: 1, fallback_policy: policyId });
    },
  );

  inProcessTest("choosing the current default changes nothing", async () => {
    const { org, token, defaultPolicyId } = await setUp();
    const response = await t.request("PUT", "/api/v1/policies/default", {
      token,
      body: { policy_id: defaultPolicyId },
    });
    expect(response.status).toBe(200);
    expect(response.body.id).toBe(defaultPolicyId);
    expect(await eventsOf(org.organizationId, "policy.assigned")).toEqual([]);
  });

  test("an unknown policy is 404; a policy_id that is not a UUID is 400", async () => {
    const { token } = await setUp();
    const unknown = await t.request("PUT", "/api/v1/policies/default", {
      token,
      body: { policy_id: "01a204ac-0000-7000-8000-000000000000" },
    });
    expect(unknown.status).toBe(404);
    const malformed = await t.request("PUT", "/api/v1/policies/default", { token, body: { policy_id: "x" } });
    expect(malformed.status).toBe(400);
    expect(malformed.body.errors[0]).toMatchObject({
      field: "policy_id",
      message: "must be a policy id (UUID)",
      received: "x",
    });
    const missing = await t.request("PUT", "/api/v1/policies/default", { token, body: {} });
    expect(missing.body.errors[0]).toMatchObject({ field: "policy_id", message: "is required" });
  });
});

describe("templates", () => {
  test("GET /templates lists strict, balanced and byod with what they are for", async () => {
    const { token } = await setUp();
    const response = await t.request("GET", "/api/v1/policies/templates", { token });
    expect(response.status).toBe(200);
    expect(response.body.data.map((template: { id: string }) => template.id)).toEqual([
      "strict",
      "balanced",
      "byod",
    ]);
    for (const template of response.body.data) {
      expect(template.name.length).toBeGreaterThan(0);
      expect(template.description.length).toBeGreaterThan(20);
      expect(template.recommended_for.length).toBeGreaterThan(0);
      expect(Object.keys(template.policy_data)).toEqual(["dlp", "network", "usb", "storage", "wipe"]);
    }
    expect(response.body.data[0].policy_data.dlp.screenshot_allowed).toBe(false);
  });

  inProcessTest("from-template deep-merges customizations over the template (arrays replaced)", async () => {
    const { org, token } = await setUp();
    const strict = findPolicyTemplate("strict")?.policy_data;
    const response = await t.request("POST", "/api/v1/policies/from-template", {
      token,
      body: {
        template_id: "strict",
        name: "Strict with headsets",
        description: "Strict, but audio devices allowed",
        customizations: {
          dlp: { screenshot_allowed: true },
          usb: { allowed_classes: ["hid", "audio"] },
        },
      },
    });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      name: "Strict with headsets",
      description: "Strict, but audio devices allowed",
      version: 1,
      active: true,
      device_count: 0,
      is_default: false,
    });
    expect(response.body.policy_data).toEqual({
      ...strict,
      dlp: { ...strict?.dlp, screenshot_allowed: true },
      usb: { ...strict?.usb, allowed_classes: ["hid", "audio"] },
    });
    const fetched = await t.request("GET", `/api/v1/policies/${response.body.id}`, { token });
    expect(fetched.body).toEqual(response.body);
    expect(await eventsOf(org.organizationId, "policy.created")).toContainEqual({
      policy_id: response.body.id,
      name: "Strict with headsets",
      version: 1,
      template_id: "strict",
    });
  });

  test("from-template without customizations copies the template", async () => {
    const { token } = await setUp();
    const response = await t.request("POST", "/api/v1/policies/from-template", {
      token,
      body: { template_id: "byod", name: "Personal phones" },
    });
    expect(response.status).toBe(201);
    expect(response.body.policy_data).toEqual(findPolicyTemplate("byod")?.policy_data);
    expect(response.body.description).toBe("");
  });

  test("an unknown template is 404; a taken name is 409; a missing name is 400", async () => {
    const { token } = await setUp();
    const unknown = await t.request("POST", "/api/v1/policies/from-template", {
      token,
      body: { template_id: "paranoid", name: "Nope" },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.reason).toBe("policy_template_not_found");
    const taken = await t.request("POST", "/api/v1/policies/from-template", {
      token,
      body: { template_id: "strict", name: "Engineering" },
    });
    expect(taken.status).toBe(409);
    const missing = await t.request("POST", "/api/v1/policies/from-template", {
      token,
      body: { template_id: "strict" },
    });
    expect(missing.status).toBe(400);
    expect(missing.body.errors[0]).toMatchObject({ field: "name", message: "is required" });
  });
});
