import { afterAll, describe, expect, test } from "bun:test";
import {
  checkIn,
  createDeviceTestApp,
  createTestPolicy,
  enrollDevice,
  HEALTHY_FACTS,
  recordedEvents,
} from "../helpers/devices";
import { inProcessTest } from "../helpers/test-app";

const t = await createDeviceTestApp();
afterAll(() => t.close());

const DEVICES = "/api/v1/devices";
const device = (id: string) => `${DEVICES}/${id}`;

/** An organization with an admin, an auditor (devices:read only) and one enrolled device. */
async function organizationWithDevice() {
  const org = await t.createOrganization();
  const auditor = await t.createUser(org.adminToken, "auditor");
  const enrolled = await enrollDevice(t, org.adminToken);
  return { org, auditor, enrolled, admin: org.adminToken };
}

function fieldsOf(body: { errors?: { field: string }[] }): string[] {
  return (body.errors ?? []).map((error) => error.field);
}

describe("GET /devices", () => {
  inProcessTest(
    "pages through the organization's devices, newest enrolled first, with total_pages",
    async () => {
      const org = await t.createOrganization();
      const other = await t.createOrganization();
      await enrollDevice(t, other.adminToken);
      const ids: string[] = [];
      for (let index = 0; index < 5; index++) {
        ids.push((await enrollDevice(t, org.adminToken)).id);
        t.clock.advanceSeconds(1);
      }
      const first = await t.request("GET", `${DEVICES}?page_size=2`, { token: org.adminToken });
      expect(first.status).toBe(200);
      expect(first.body).toMatchObject({ total: 5, page: 1, page_size: 2, total_pages: 3 });
      expect(first.body.data.map((item: { id: string }) => item.id)).toEqual([ids[4], ids[3]]);
      expect(Object.keys(first.body.data[0]).sort()).toEqual([
        "compliance_status",
        "device_name",
        "enrolled_at",
        "id",
        "last_seen",
        "platform",
        "status",
      ]);
      const last = await t.request("GET", `${DEVICES}?page=3&page_size=2`, { token: org.adminToken });
      expect(last.body.data.map((item: { id: string }) => item.id)).toEqual([ids[0]]);
      const beyond = await t.request("GET", `${DEVICES}?page=9`, { token: org.adminToken });
      expect(beyond.body).toMatchObject({ data: [], total: 5 });
      const defaults = await t.request("GET", DEVICES, { token: org.adminToken });
      expect(defaults.body).toMatchObject({ page: 1, page_size: 20, total_pages: 1 });
    },
  );

  test("filters by status, platform and user, with matching totals", async () => {
    const org = await t.createOrganization();
    const member = await t.createUser(org.adminToken, "member");
    const windows = await enrollDevice(t, org.adminToken, { platform: "windows", os_version: "11" });
    const linux = await enrollDevice(t, org.adminToken, { platform: "linux" }, { user_id: member.id });
    const android = await enrollDevice(t, org.adminToken, { platform: "android", os_version: "14" });
    await t.request("PUT", `${device(android.id)}/status`, {
      token: org.adminToken,
      body: { status: "suspended", reason: "audit" },
    });
    const ids = async (query: string) => {
      const response = await t.request("GET", `${DEVICES}?${query}`, { token: org.adminToken });
      expect(response.status).toBe(200);
      expect(response.body.total).toBe(response.body.data.length);
      return response.body.data.map((item: { id: string }) => item.id);
    };
    expect(await ids("platform=windows")).toEqual([windows.id]);
    expect(await ids("status=suspended")).toEqual([android.id]);
    expect(await ids("status=online")).toEqual([linux.id, windows.id]);
    expect(await ids(`user_id=${member.id}`)).toEqual([linux.id]);
    expect(await ids(`user_id=${member.id}&platform=windows`)).toEqual([]);
    expect(await ids("status=wiped")).toEqual([]);
  });

  test("400 naming the parameter for an unknown filter value or a bad page", async () => {
    const org = await t.createOrganization();
    for (const [query, parameter] of [
      ["status=foo", "status"],
      ["platform=beos", "platform"],
      ["user_id=nobody", "user_id"],
      ["page=0", "page"],
      ["page=abc", "page"],
      ["page_size=101", "page_size"],
      ["page_size=0", "page_size"],
    ] as const) {
      const response = await t.request("GET", `${DEVICES}?${query}`, { token: org.adminToken });
      expect(response.status, query).toBe(400);
      expect(fieldsOf(response.body), query).toContain(parameter);
    }
  });

  test("401 without a token; 403 naming devices:read for a member", async () => {
    const org = await t.createOrganization();
    expect((await t.request("GET", DEVICES)).status).toBe(401);
    const member = await t.createUser(org.adminToken, "member");
    const response = await t.request("GET", DEVICES, { token: member.token });
    expect(response.status).toBe(403);
    expect(response.body.details).toContain("devices:read");
  });
});

describe("GET /devices/:id", () => {
  test("many reads and check-ins at once, across organizations: each gets its own answer, never another's device", async () => {
    // On PostgreSQL, lookups that arrive together are answered by one statement (src/db/pg/coalesce.ts).
    const first = await organizationWithDevice();
    const second = await organizationWithDevice();
    const extra = await enrollDevice(t, second.admin);
    await checkIn(t, extra.device_token, { agent_version: "7.7.7", facts: HEALTHY_FACTS });
    const asks = Array.from({ length: 40 }, (_, index) => {
      const pick = index % 5;
      if (pick === 0) return { token: first.admin, id: first.enrolled.id, status: 200 };
      if (pick === 1) return { token: second.admin, id: second.enrolled.id, status: 200 };
      if (pick === 2) return { token: second.auditor.token, id: extra.id, status: 200 };
      // Another organization's device, whoever asks, is not found.
      if (pick === 3) return { token: first.admin, id: extra.id, status: 404 };
      return { token: second.admin, id: first.enrolled.id, status: 404 };
    });
    const [answers, checkIns] = await Promise.all([
      Promise.all(asks.map((ask) => t.request("GET", device(ask.id), { token: ask.token }))),
      Promise.all(
        [first.enrolled, second.enrolled, extra].map((enrolled) =>
          checkIn(t, enrolled.device_token, { facts: HEALTHY_FACTS }),
        ),
      ),
    ]);
    answers.forEach((answer, index) => {
      const ask = asks[index] as (typeof asks)[number];
      expect(answer.status).toBe(ask.status);
      if (ask.status === 200) expect(answer.body.id).toBe(ask.id);
    });
    expect(
      answers.find((answer, index) => asks[index]?.id === extra.id && answer.status === 200)?.body
        .agent_version,
    ).toBe("7.7.7");
    expect(checkIns.map((answer) => [answer.status, answer.body.device_id])).toEqual([
      [200, first.enrolled.id],
      [200, second.enrolled.id],
      [200, extra.id],
    ]);
  });

  test("returns the device with compliance; a reader may see it", async () => {
    const { auditor, enrolled } = await organizationWithDevice();
    const response = await t.request("GET", device(enrolled.id), { token: auditor.token });
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual([
      "agent_version",
      "certificate",
      "compliance",
      "created_at",
      "device_name",
      "enforcement",
      "enrolled_at",
      "facts",
      "hardware_id",
      "id",
      "ignored_facts",
      "last_seen",
      "latest_wipe",
      "organization_id",
      "os_version",
      "platform",
      "policy_id",
      "status",
      "suspended_reason",
      "updated_at",
      "user_id",
      "vpn_ip",
      "vpn_profile",
      "vpn_public_key",
    ]);
  });

  test("404 for an unknown id and for another organization's device", async () => {
    const { enrolled } = await organizationWithDevice();
    const stranger = await t.createOrganization();
    for (const path of [
      device(enrolled.id),
      `${device(enrolled.id)}/compliance`,
      `${device(enrolled.id)}/policy`,
      `${device(enrolled.id)}/logs`,
    ]) {
      const response = await t.request("GET", path, { token: stranger.adminToken });
      expect(response.status, path).toBe(404);
      expect(response.body.reason).toBe("device_not_found");
    }
    expect((await t.request("GET", device(crypto.randomUUID()), { token: stranger.adminToken })).status).toBe(
      404,
    );
    expect((await t.request("GET", device("not-a-uuid"), { token: stranger.adminToken })).status).toBe(404);
  });
});

describe("PUT /devices/:id/status", () => {
  inProcessTest("unsuspending a device that has not checked in for a while leaves it offline", async () => {
    const { org, enrolled, admin } = await organizationWithDevice();
    await t.request("PUT", `${device(enrolled.id)}/status`, {
      token: admin,
      body: { status: "suspended", reason: "travel" },
    });
    t.clock.advanceSeconds(901);
    const response = await t.request("PUT", `${device(enrolled.id)}/status`, {
      token: admin,
      body: { status: "online" },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ status: "offline", previous_status: "suspended" });
    const [unsuspended] = await recordedEvents(t, org.organizationId, "device.unsuspended");
    expect(unsuspended?.data).toMatchObject({ device_id: enrolled.id, status: "offline" });
  });

  test("400 for another target, a blank reason, or a missing status; state unchanged", async () => {
    const { enrolled, admin } = await organizationWithDevice();
    for (const [body, field] of [
      [{ status: "wiped" }, "status"],
      [{ status: "offline" }, "status"],
      [{}, "status"],
      [{ status: "suspended", reason: "" }, "reason"],
      [{ status: "suspended", reason: "   " }, "reason"],
      [{ status: "suspended", reason: "x".repeat(501) }, "reason"],
    ] as const) {
      const response = await t.request("PUT", `${device(enrolled.id)}/status`, { token: admin, body });
      expect(response.status, JSON.stringify(body)).toBe(400);
      expect(fieldsOf(response.body)).toContain(field);
    }
    expect((await t.request("GET", device(enrolled.id), { token: admin })).body.status).toBe("online");
  });

  test("403 naming devices:write for a reader, 404 across organizations, 401 without a token", async () => {
    const { enrolled, auditor } = await organizationWithDevice();
    const body = { status: "suspended", reason: "x" };
    const forbidden = await t.request("PUT", `${device(enrolled.id)}/status`, { token: auditor.token, body });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.details).toContain("devices:write");
    const stranger = await t.createOrganization();
    const hidden = await t.request("PUT", `${device(enrolled.id)}/status`, {
      token: stranger.adminToken,
      body,
    });
    expect(hidden.status).toBe(404);
    expect((await t.request("PUT", `${device(enrolled.id)}/status`, { body })).status).toBe(401);
  });

  test("a device with a pending wipe can still be suspended", async () => {
    const { enrolled, admin } = await organizationWithDevice();
    await t.request("POST", `${device(enrolled.id)}/wipe`, { token: admin, body: { reason: "leaver" } });
    const response = await t.request("PUT", `${device(enrolled.id)}/status`, {
      token: admin,
      body: { status: "suspended", reason: "until the wipe lands" },
    });
    expect(response.status).toBe(200);
  });
});

describe("POST /devices/:id/wipe and GET /devices/:id/wipe/:wipe_id", () => {
  inProcessTest("notify_user defaults to true and reaches the agent; the wipe is recorded", async () => {
    const { org, enrolled, admin } = await organizationWithDevice();
    const wipe = await t.request("POST", `${device(enrolled.id)}/wipe`, {
      token: admin,
      body: { reason: "stolen" },
    });
    expect(wipe.status).toBe(202);
    const polled = await t.request("GET", `${device(enrolled.id)}/wipe/${wipe.body.wipe_id}`, {
      token: admin,
    });
    expect(structuredClone(polled.body)).toEqual({
      wipe_id: wipe.body.wipe_id,
      device_id: enrolled.id,
      status: "pending",
      reason: "stolen",
      notify_user: true,
      initiated_at: wipe.body.initiated_at,
      initiated_by: org.adminEmail,
      completed_at: null,
      error: null,
      report: null,
    });
    const command = (await checkIn(t, enrolled.device_token)).body.commands[0];
    expect(command).toMatchObject({ wipe_id: wipe.body.wipe_id, notify_user: true, reason: "stolen" });
    const [requested] = await recordedEvents(t, org.organizationId, "device.wipe_requested");
    expect(requested?.data).toMatchObject({
      device_id: enrolled.id,
      wipe_id: wipe.body.wipe_id,
      reason: "stolen",
    });
  });

  test("initiated_by names the API key that asked", async () => {
    const { enrolled, admin } = await organizationWithDevice();
    const key = await t.createApiKey(admin, ["devices:write"]);
    const wipe = await t.request("POST", `${device(enrolled.id)}/wipe`, {
      token: key,
      body: { reason: "script" },
    });
    expect(wipe.status).toBe(202);
    expect(wipe.body.initiated_by).toContain("key devices:write");
  });

  test("400 without a reason; 404 for another device's wipe id; 403 for a reader; 404 across organizations", async () => {
    const { enrolled, admin, auditor } = await organizationWithDevice();
    for (const body of [{}, { reason: "" }, { reason: "x", notify_user: "yes" }]) {
      const response = await t.request("POST", `${device(enrolled.id)}/wipe`, { token: admin, body });
      expect(response.status, JSON.stringify(body)).toBe(400);
    }
    const missing = await t.request("POST", `${device(enrolled.id)}/wipe`, { token: admin, body: {} });
    expect(fieldsOf(missing.body)).toEqual(["reason"]);
    const forbidden = await t.request("POST", `${device(enrolled.id)}/wipe`, {
      token: auditor.token,
      body: { reason: "x" },
    });
    expect(forbidden.status).toBe(403);

    const wipe = await t.request("POST", `${device(enrolled.id)}/wipe`, {
      token: admin,
      body: { reason: "x" },
    });
    const sibling = await enrollDevice(t, admin);
    const crossed = await t.request("GET", `${device(sibling.id)}/wipe/${wipe.body.wipe_id}`, {
      token: admin,
    });
    expect(crossed.status).toBe(404);
    expect(crossed.body.reason).toBe("wipe_not_found");
    // A reader may poll.
    const polled = await t.request("GET", `${device(enrolled.id)}/wipe/${wipe.body.wipe_id}`, {
      token: auditor.token,
    });
    expect(polled.status).toBe(200);
    const stranger = await t.createOrganization();
    for (const [method, path] of [
      ["POST", `${device(enrolled.id)}/wipe`],
      ["GET", `${device(enrolled.id)}/wipe/${wipe.body.wipe_id}`],
    ] as const) {
      const body = method === "POST" ? { reason: "x" } : undefined;
      const response = await t.request(method, path, { token: stranger.adminToken, body });
      expect(response.status).toBe(404);
    }
  });
});

describe("a blank wipe reason", () => {
  test("is 400 naming reason and requests nothing; a reason is stored trimmed", async () => {
    const { enrolled, admin } = await organizationWithDevice();
    for (const reason of ["   ", "\t\n "]) {
      const response = await t.request("POST", `${device(enrolled.id)}/wipe`, {
        token: admin,
        body: { reason },
      });
      expect(response.status).toBe(400);
      expect(response.body.errors).toEqual([
        expect.objectContaining({ field: "reason", message: "must not be blank" }),
      ]);
    }
    expect((await checkIn(t, enrolled.device_token)).body.commands).toEqual([]);
    const wipe = await t.request("POST", `${device(enrolled.id)}/wipe`, {
      token: admin,
      body: { reason: "  stolen  " },
    });
    expect(wipe.status).toBe(202);
    expect((await checkIn(t, enrolled.device_token)).body.commands[0].reason).toBe("stolen");
  });

  test("is 400 for a bulk wipe too", async () => {
    const { enrolled, admin } = await organizationWithDevice();
    const response = await t.request("POST", `${DEVICES}/bulk`, {
      token: admin,
      body: { action: "wipe", reason: "   ", device_ids: [enrolled.id] },
    });
    expect(response.status).toBe(400);
    expect(fieldsOf(response.body)).toEqual(["reason"]);
  });
});

describe("ids written in uppercase", () => {
  inProcessTest("find the same device, wipe and policy", async () => {
    const { org, enrolled, admin } = await organizationWithDevice();
    const upper = enrolled.id.toUpperCase();
    const found = await t.request("GET", device(upper), { token: admin });
    expect(found.status).toBe(200);
    expect(found.body.id).toBe(enrolled.id);
    expect((await t.request("GET", `${device(upper)}/compliance`, { token: admin })).status).toBe(200);
    expect((await t.request("GET", `${device(upper)}/logs`, { token: admin })).body.total).toBe(1);

    const policy = await createTestPolicy(t, org.adminToken, "Upper");
    const assigned = await t.request("PUT", `${device(upper)}/policy`, {
      token: admin,
      body: { policy_id: policy.id.toUpperCase() },
    });
    expect(assigned.status).toBe(200);
    expect(assigned.body.policy_id).toBe(policy.id);
    const followers = await t.request("GET", `/api/v1/policies/${policy.id}/devices`, { token: admin });
    expect(followers.body.data.map((entry: { id: string }) => entry.id)).toEqual([enrolled.id]);
    // Assigning the same policy again, in lowercase, changes nothing.
    await t.request("PUT", `${device(enrolled.id)}/policy`, { token: admin, body: { policy_id: policy.id } });
    expect(await recordedEvents(t, org.organizationId, "policy.assigned")).toHaveLength(1);

    const wipe = await t.request("POST", `${device(upper)}/wipe`, { token: admin, body: { reason: "x" } });
    expect(wipe.status).toBe(202);
    const polled = await t.request("GET", `${device(upper)}/wipe/${wipe.body.wipe_id.toUpperCase()}`, {
      token: admin,
    });
    expect(polled.body).toMatchObject({ wipe_id: wipe.body.wipe_id, status: "pending" });
    const completed = await t.request(
      "POST",
      `/api/v1/agent/wipes/${wipe.body.wipe_id.toUpperCase()}/complete`,
      {
        token: enrolled.device_token,
        body: { success: true },
      },
    );
    expect(completed.body).toMatchObject({ status: "completed" });
  });
});

describe("DELETE /devices/:id", () => {
  test("403 for a reader, 404 across organizations, 401 without a token", async () => {
    const { enrolled, auditor } = await organizationWithDevice();
    expect((await t.request("DELETE", device(enrolled.id), { token: auditor.token })).status).toBe(403);
    const stranger = await t.createOrganization();
    expect((await t.request("DELETE", device(enrolled.id), { token: stranger.adminToken })).status).toBe(404);
    expect((await t.request("DELETE", device(enrolled.id))).status).toBe(401);
  });
});

describe("GET and PUT /devices/:id/policy", () => {
  inProcessTest(
    "shows the default policy, assigns another one, and goes back to the default with null",
    async () => {
      const { org, enrolled, admin } = await organizationWithDevice();
      const initial = await t.request("GET", `${device(enrolled.id)}/policy`, { token: admin });
      expect(structuredClone(initial.body)).toEqual({
        policy_id: enrolled.policy.id,
        name: "Default policy",
        version: 1,
        is_default: true,
        assignment: "default",
        applied_at: null,
        applied_version: null,
        settings: { screenshot_allowed: true, clipboard_sharing: true, usb_allowed: false },
      });

      const open = await createTestPolicy(t, org.adminToken, "Open", {
        usb: { allowed: true, whitelist: [], allowed_classes: [], audit_only: false },
      });
      const assigned = await t.request("PUT", `${device(enrolled.id)}/policy`, {
        token: admin,
        body: { policy_id: open.id },
      });
      expect(assigned.status).toBe(200);
      expect(assigned.body).toMatchObject({
        policy_id: open.id,
        name: "Open",
        is_default: false,
        assignment: "explicit",
        settings: { usb_allowed: true },
      });
      expect((await t.request("GET", device(enrolled.id), { token: admin })).body.policy_id).toBe(open.id);
      const [event] = await recordedEvents(t, org.organizationId, "policy.assigned");
      expect(event?.data).toMatchObject({
        policy_id: open.id,
        device_id: enrolled.id,
        device_name: enrolled.device_name,
        platform: "macos",
      });

      const back = await t.request("PUT", `${device(enrolled.id)}/policy`, {
        token: admin,
        body: { policy_id: null },
      });
      expect(back.body).toMatchObject({
        policy_id: enrolled.policy.id,
        assignment: "default",
        is_default: true,
      });
    },
  );

  inProcessTest("re-evaluates compliance against the newly assigned policy", async () => {
    const { org, enrolled, admin } = await organizationWithDevice();
    // USB devices are open: fine under a policy allowing USB, a violation under the default (usb.allowed false).
    const open = await createTestPolicy(t, org.adminToken, "Open", {
      usb: { allowed: true, whitelist: [], allowed_classes: [], audit_only: false },
    });
    await t.request("PUT", `${device(enrolled.id)}/policy`, { token: admin, body: { policy_id: open.id } });
    await checkIn(t, enrolled.device_token, { facts: { ...HEALTHY_FACTS, usb_devices_blocked: false } });
    const compliance = async () =>
      (await t.request("GET", `${device(enrolled.id)}/compliance`, { token: admin })).body;
    expect((await compliance()).status).toBe("compliant");

    await t.request("PUT", `${device(enrolled.id)}/policy`, { token: admin, body: { policy_id: null } });
    expect(structuredClone(await compliance())).toEqual({
      status: "non_compliant",
      last_check: t.clock.now().toISOString(),
      violations: [{ rule: "usb.allowed", required: false, actual: true, severity: "high" }],
      missing: [],
    });
    const flips = await recordedEvents(t, org.organizationId, "device.compliance_changed");
    expect(flips.at(-1)?.data).toMatchObject({ device_id: enrolled.id, status: "non_compliant" });
  });

  test("404 for an unknown or foreign policy; 400 for a malformed id; 403 for a reader", async () => {
    const { enrolled, admin, auditor } = await organizationWithDevice();
    const stranger = await t.createOrganization();
    const foreign = await createTestPolicy(t, stranger.adminToken, "Foreign");
    for (const policyId of [crypto.randomUUID(), foreign.id]) {
      const response = await t.request("PUT", `${device(enrolled.id)}/policy`, {
        token: admin,
        body: { policy_id: policyId },
      });
      expect(response.status).toBe(404);
      expect(response.body.reason).toBe("policy_not_found");
    }
    for (const body of [{}, { policy_id: "default" }]) {
      const response = await t.request("PUT", `${device(enrolled.id)}/policy`, { token: admin, body });
      expect(response.status).toBe(400);
      expect(fieldsOf(response.body)).toContain("policy_id");
    }
    const forbidden = await t.request("PUT", `${device(enrolled.id)}/policy`, {
      token: auditor.token,
      body: { policy_id: null },
    });
    expect(forbidden.status).toBe(403);
    expect((await t.request("GET", `${device(enrolled.id)}/policy`, { token: auditor.token })).status).toBe(
      200,
    );
    const hidden = await t.request("PUT", `${device(enrolled.id)}/policy`, {
      token: stranger.adminToken,
      body: { policy_id: null },
    });
    expect(hidden.status).toBe(404);
  });
});

describe("GET /devices/:id/compliance", () => {
  test("unknown before any fact or OS version is reported", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken, { os_version: undefined });
    const response = await t.request("GET", `${device(enrolled.id)}/compliance`, { token: org.adminToken });
    expect(response.body).toEqual({
      status: "unknown",
      last_check: null,
      violations: [],
      missing: [
        "os_version",
        "storage.encryption_required",
        "network.vpn_required",
        "usb.allowed",
        "storage.external_storage_allowed",
      ],
    });
  });

  test("403 for a member, 401 without a token", async () => {
    const { enrolled, admin } = await organizationWithDevice();
    const member = await t.createUser(admin, "member");
    expect(
      (await t.request("GET", `${device(enrolled.id)}/compliance`, { token: member.token })).status,
    ).toBe(403);
    expect((await t.request("GET", `${device(enrolled.id)}/compliance`)).status).toBe(401);
  });
});

describe("GET /devices/:id/logs", () => {
  inProcessTest("paginates newest first and filters by event and time", async () => {
    const { enrolled, admin } = await organizationWithDevice();
    const times: string[] = [];
    for (let index = 0; index < 4; index++) {
      t.clock.advanceSeconds(60);
      times.push(t.clock.now().toISOString());
      await checkIn(t, enrolled.device_token, { agent_version: `1.${index}` });
    }
    const logs = (query: string) =>
      t.request("GET", `${device(enrolled.id)}/logs?${query}`, { token: admin });

    const page = await logs("event=device.checkin&page=2&page_size=3");
    expect(page.body).toMatchObject({ total: 4, page: 2, page_size: 3, total_pages: 2 });
    expect(page.body.data).toEqual([
      {
        timestamp: times[0],
        event: "device.checkin",
        details: expect.objectContaining({ agent_version: "1.0" }),
      },
    ]);
    const window = await logs(`since=${times[1]}&until=${times[2]}`);
    expect(window.body.data.map((entry: { timestamp: string }) => entry.timestamp)).toEqual([
      times[2],
      times[1],
    ]);
    const all = await logs("");
    expect(all.body.total).toBe(5);
    expect(all.body.data.at(-1).event).toBe("device.enrolled");
  });

  inProcessTest(
    "since and until are compared as instants, whatever offset they are written with",
    async () => {
      const { enrolled, admin } = await organizationWithDevice();
      t.clock.advanceSeconds(3600);
      const checkedInAt = t.clock.now();
      await checkIn(t, enrolled.device_token);
      // The same instant written two hours east of UTC, without milliseconds.
      const local = new Date(checkedInAt.getTime() + 2 * 3600_000)
        .toISOString()
        .replace(/\.\d{3}Z$/, "+02:00");
      const logs = async (query: string) =>
        (await t.request("GET", `${device(enrolled.id)}/logs?${query}`, { token: admin })).body;
      expect(
        (await logs(`since=${encodeURIComponent(local)}`)).data.map(
          (entry: { event: string }) => entry.event,
        ),
      ).toEqual(["device.checkin"]);
      expect((await logs(`until=${encodeURIComponent(local)}`)).total).toBe(2);
      expect((await logs(`since=${encodeURIComponent("0000-01-01T00:00:00Z")}`)).total).toBe(2);
    },
  );

  test("400 naming since or until for an instant outside the years 0000-9999 once in UTC", async () => {
    const { enrolled, admin } = await organizationWithDevice();
    for (const [query, parameter] of [
      ["since=0000-01-01T00:00:00%2B01:00", "since"],
      ["until=9999-12-31T23:59:59-01:00", "until"],
    ] as const) {
      const response = await t.request("GET", `${device(enrolled.id)}/logs?${query}`, { token: admin });
      expect(response.status, query).toBe(400);
      expect(fieldsOf(response.body), query).toEqual([parameter]);
    }
  });

  test("400 for a malformed timestamp or page", async () => {
    const { enrolled, admin } = await organizationWithDevice();
    for (const [query, parameter] of [
      ["since=yesterday", "since"],
      ["until=2026-13-01", "until"],
      ["page_size=500", "page_size"],
    ] as const) {
      const response = await t.request("GET", `${device(enrolled.id)}/logs?${query}`, { token: admin });
      expect(response.status, query).toBe(400);
      expect(fieldsOf(response.body), query).toContain(parameter);
    }
  });
});

describe("POST /devices/bulk", () => {
  inProcessTest(
    "applies the action per device: valid ids succeed, unknown, foreign and illegal ones fail alone",
    async () => {
      const { org, enrolled, admin } = await organizationWithDevice();
      const second = await enrollDevice(t, admin);
      const alreadySuspended = await enrollDevice(t, admin);
      await t.request("PUT", `${device(alreadySuspended.id)}/status`, {
        token: admin,
        body: { status: "suspended", reason: "earlier" },
      });
      const stranger = await t.createOrganization();
      const foreign = await enrollDevice(t, stranger.adminToken);
      const unknown = crypto.randomUUID();

      const response = await t.request("POST", `${DEVICES}/bulk`, {
        token: admin,
        body: {
          action: "suspend",
          reason: "security incident",
          device_ids: [enrolled.id, unknown, second.id, foreign.id, alreadySuspended.id],
        },
      });
      expect(response.status).toBe(200);
      expect(structuredClone(response.body)).toEqual({
        action: "suspend",
        results: [
          { device_id: enrolled.id, success: true },
          { device_id: unknown, success: false, error: "device not found", reason: "device_not_found" },
          { device_id: second.id, success: true },
          { device_id: foreign.id, success: false, error: "device not found", reason: "device_not_found" },
          {
            device_id: alreadySuspended.id,
            success: false,
            error: "device is already suspended",
            reason: "device_already_suspended",
          },
        ],
        succeeded: 2,
        failed: 3,
      });
      const suspended = await t.request("GET", `${DEVICES}?status=suspended`, { token: admin });
      expect(suspended.body.total).toBe(3);
      expect((await t.request("GET", device(foreign.id), { token: stranger.adminToken })).body.status).toBe(
        "online",
      );
      expect(await recordedEvents(t, org.organizationId, "device.suspended")).toHaveLength(3);

      const unsuspend = await t.request("POST", `${DEVICES}/bulk`, {
        token: admin,
        body: { action: "unsuspend", device_ids: [enrolled.id, second.id] },
      });
      expect(unsuspend.body).toMatchObject({ succeeded: 2, failed: 0 });
    },
  );

  test("wipe and assign_policy in bulk", async () => {
    const { org, enrolled, admin } = await organizationWithDevice();
    const second = await enrollDevice(t, admin);
    const policy = await createTestPolicy(t, org.adminToken, "Fleet");
    const assign = await t.request("POST", `${DEVICES}/bulk`, {
      token: admin,
      body: { action: "assign_policy", policy_id: policy.id, device_ids: [enrolled.id, second.id] },
    });
    expect(assign.body).toMatchObject({ action: "assign_policy", succeeded: 2, failed: 0 });
    expect((await t.request("GET", `${device(second.id)}/policy`, { token: admin })).body.policy_id).toBe(
      policy.id,
    );

    const wipe = await t.request("POST", `${DEVICES}/bulk`, {
      token: admin,
      body: {
        action: "wipe",
        reason: "office closed",
        notify_user: false,
        device_ids: [enrolled.id, second.id],
      },
    });
    expect(wipe.body).toMatchObject({ succeeded: 2, failed: 0 });
    const command = (await checkIn(t, second.device_token)).body.commands[0];
    expect(command).toMatchObject({ reason: "office closed", notify_user: false });
    // Each result names its wipe, so a bulk wipe can be polled device by device.
    const secondResult = wipe.body.results.find(
      (result: { device_id: string }) => result.device_id === second.id,
    );
    expect(secondResult.wipe_id).toBe(command.wipe_id);
    const polled = await t.request("GET", `${device(second.id)}/wipe/${secondResult.wipe_id}`, {
      token: admin,
    });
    expect(polled.body).toMatchObject({ wipe_id: command.wipe_id, status: "pending" });
    const again = await t.request("POST", `${DEVICES}/bulk`, {
      token: admin,
      body: { action: "wipe", reason: "again", device_ids: [enrolled.id] },
    });
    expect(again.body.results[0]).toEqual({
      device_id: enrolled.id,
      success: false,
      error: "a wipe is already pending for this device",
      reason: "wipe_pending",
    });
  });

  test("400 for the whole request when the action lacks what it needs, or the ids are invalid", async () => {
    const { enrolled, admin } = await organizationWithDevice();
    const ids = [enrolled.id];
    for (const [body, field] of [
      [{ action: "suspend", device_ids: ids }, "reason"],
      [{ action: "wipe", device_ids: ids, reason: " " }, "reason"],
      [{ action: "assign_policy", device_ids: ids }, "policy_id"],
      [{ action: "explode", device_ids: ids }, "action"],
      [{ action: "unsuspend", device_ids: [] }, "device_ids"],
      [{ action: "unsuspend", device_ids: [enrolled.id, enrolled.id] }, "device_ids"],
      [{ action: "unsuspend", device_ids: ["nope"] }, "device_ids.0"],
      [
        { action: "unsuspend", device_ids: Array.from({ length: 501 }, () => crypto.randomUUID()) },
        "device_ids",
      ],
    ] as const) {
      const response = await t.request("POST", `${DEVICES}/bulk`, { token: admin, body });
      expect(response.status, JSON.stringify(body).slice(0, 80)).toBe(400);
      expect(fieldsOf(response.body)).toContain(field);
    }
    expect((await t.request("GET", device(enrolled.id), { token: admin })).body.status).toBe("online");
  });

  test("404 for an unknown policy; 403 for a reader; 401 without a token", async () => {
    const { enrolled, admin, auditor } = await organizationWithDevice();
    const unknown = await t.request("POST", `${DEVICES}/bulk`, {
      token: admin,
      body: { action: "assign_policy", policy_id: crypto.randomUUID(), device_ids: [enrolled.id] },
    });
    expect(unknown.status).toBe(404);
    expect(unknown.body.reason).toBe("policy_not_found");
    const body = { action: "unsuspend", device_ids: [enrolled.id] };
    const forbidden = await t.request("POST", `${DEVICES}/bulk`, { token: auditor.token, body });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.details).toContain("devices:write");
    expect((await t.request("POST", `${DEVICES}/bulk`, { body })).status).toBe(401);
  });
});
