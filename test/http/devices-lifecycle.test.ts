import { afterAll, expect } from "bun:test";
import {
  checkIn,
  createDeviceTestApp,
  createEnrollmentToken,
  enrollBody,
  HEALTHY_FACTS,
  recordedEvents,
} from "../helpers/devices";
import { inProcessTest } from "../helpers/test-app";

const t = await createDeviceTestApp();
afterAll(() => t.close());

inProcessTest(
  "a device's whole life: token, enrollment, check-ins, compliance, suspension, wipe, deletion",
  async () => {
    const org = await t.createOrganization();
    const admin = org.adminToken;
    const device = (id: string) => `/api/v1/devices/${id}`;
    const getDevice = async (id: string) => (await t.request("GET", device(id), { token: admin })).body;

    // Token and enrollment.
    const { token } = await createEnrollmentToken(t, admin);
    const enrolled = await t.request("POST", "/api/v1/devices/enroll", { body: enrollBody(token) });
    expect(enrolled.status).toBe(201);
    const id: string = enrolled.body.id;
    const deviceToken: string = enrolled.body.device_token;
    expect((await getDevice(id)).status).toBe("online");

    // First check-in: logged, the policy is delivered.
    t.clock.advanceSeconds(60);
    const first = await checkIn(t, deviceToken, { agent_version: "1.4.1", os_version: "14.5" });
    expect(first.status).toBe(200);
    expect(structuredClone(first.body)).toMatchObject({
      device_id: id,
      status: "online",
      policy: {
        id: enrolled.body.policy.id,
        version: 1,
        policy_data: { storage: { encryption_required: true } },
      },
      commands: [],
      next_checkin_seconds: 300,
    });
    // An OS version alone checks none of the facts the default policy needs: unknown, not compliant.
    expect(first.body.compliance).toEqual({
      status: "unknown",
      violations: [],
      missing: [
        "storage.encryption_required",
        "network.vpn_required",
        "usb.allowed",
        "storage.external_storage_allowed",
      ],
    });

    // The agent reports the policy applied: policy.applied is logged once for that version. The next
    // check-in reports nothing new, so it updates the device without a device.checkin entry.
    t.clock.advanceSeconds(60);
    expect((await checkIn(t, deviceToken, { policy_version: 1 })).status).toBe(200);
    t.clock.advanceSeconds(60);
    expect((await checkIn(t, deviceToken, { policy_version: 1 })).status).toBe(200);
    const logs = await t.request("GET", `${device(id)}/logs`, { token: admin });
    expect(logs.body.data.map((entry: { event: string }) => entry.event)).toEqual([
      "policy.applied",
      "device.checkin",
      "device.checkin",
      "device.enrolled",
    ]);
    expect(logs.body.data[2].details).toMatchObject({ agent_version: "1.4.1", os_version: "14.5" });
    const policyView = await t.request("GET", `${device(id)}/policy`, { token: admin });
    expect(policyView.body).toMatchObject({ applied_version: 1, applied_at: logs.body.data[0].timestamp });

    // Non-compliant facts, then compliant ones: each flip is an event.
    const unhealthy = await checkIn(t, deviceToken, {
      policy_version: 1,
      facts: { ...HEALTHY_FACTS, disk_encrypted: false },
    });
    expect(unhealthy.body.compliance.status).toBe("non_compliant");
    expect((await getDevice(id)).compliance).toEqual({
      status: "non_compliant",
      last_check: t.clock.now().toISOString(),
      violations: [
        { rule: "storage.encryption_required", required: true, actual: false, severity: "critical" },
      ],
      missing: [],
    });
    const healthy = await checkIn(t, deviceToken, { policy_version: 1, facts: HEALTHY_FACTS });
    expect(healthy.body.compliance).toEqual({ status: "compliant", violations: [], missing: [] });
    expect(
      (await recordedEvents(t, org.organizationId, "device.compliance_changed")).map(
        (event) => event.data.status,
      ),
    ).toEqual(["non_compliant", "compliant"]);

    // Suspend: a reason is required; suspending twice is a conflict.
    const noReason = await t.request("PUT", `${device(id)}/status`, {
      token: admin,
      body: { status: "suspended" },
    });
    expect(noReason.status).toBe(400);
    expect(noReason.body.errors[0].field).toBe("reason");
    const suspended = await t.request("PUT", `${device(id)}/status`, {
      token: admin,
      body: { status: "suspended", reason: "lost on a train" },
    });
    expect(suspended.status).toBe(200);
    expect(structuredClone(suspended.body)).toMatchObject({
      id,
      status: "suspended",
      reason: "lost on a train",
    });
    const suspendAgain = await t.request("PUT", `${device(id)}/status`, {
      token: admin,
      body: { status: "suspended", reason: "again" },
    });
    expect(suspendAgain.status).toBe(409);
    expect(suspendAgain.body.reason).toBe("device_already_suspended");
    expect(await getDevice(id)).toMatchObject({ status: "suspended", suspended_reason: "lost on a train" });
    // A suspended device still checks in and stays suspended.
    expect((await checkIn(t, deviceToken)).body.status).toBe("suspended");

    // Unsuspend: back online (it checked in recently); unsuspending again is a conflict.
    const unsuspended = await t.request("PUT", `${device(id)}/status`, {
      token: admin,
      body: { status: "active" },
    });
    expect(unsuspended.status).toBe(200);
    expect(unsuspended.body).toMatchObject({ status: "online", reason: null });
    const unsuspendAgain = await t.request("PUT", `${device(id)}/status`, {
      token: admin,
      body: { status: "online" },
    });
    expect(unsuspendAgain.status).toBe(409);
    expect(unsuspendAgain.body.reason).toBe("device_not_suspended");
    expect((await getDevice(id)).status).toBe("online");

    // Deleting before the wipe is refused.
    const early = await t.request("DELETE", device(id), { token: admin });
    expect(early.status).toBe(409);
    expect(structuredClone(early.body)).toMatchObject({
      code: 409,
      message: "device must be wiped before deletion",
    });

    // Wipe: pending until the agent confirms; a second wipe is a conflict.
    const wipe = await t.request("POST", `${device(id)}/wipe`, {
      token: admin,
      body: { reason: "employee left", notify_user: false },
    });
    expect(wipe.status).toBe(202);
    expect(structuredClone(wipe.body)).toEqual({
      message: expect.any(String),
      wipe_id: expect.any(String),
      status: "pending",
      initiated_at: t.clock.now().toISOString(),
      initiated_by: org.adminEmail,
    });
    const wipeId: string = wipe.body.wipe_id;
    const secondWipe = await t.request("POST", `${device(id)}/wipe`, {
      token: admin,
      body: { reason: "again" },
    });
    expect(secondWipe.status).toBe(409);
    const pending = await t.request("GET", `${device(id)}/wipe/${wipeId}`, { token: admin });
    expect(pending.body).toMatchObject({ wipe_id: wipeId, status: "pending", completed_at: null });

    // The agent receives the command and completes it.
    t.clock.advanceSeconds(30);
    const withCommand = await checkIn(t, deviceToken);
    expect(withCommand.body.commands).toEqual([
      {
        type: "wipe",
        wipe_id: wipeId,
        reason: "employee left",
        notify_user: false,
        initiated_at: pending.body.initiated_at,
      },
    ]);
    t.clock.advanceSeconds(30);
    const completed = await t.request("POST", `/api/v1/agent/wipes/${wipeId}/complete`, {
      token: deviceToken,
      body: { success: true },
    });
    expect(completed.status).toBe(200);
    expect(completed.body).toMatchObject({ wipe_id: wipeId, status: "completed" });
    const polled = await t.request("GET", `${device(id)}/wipe/${wipeId}`, { token: admin });
    expect(polled.body).toMatchObject({ status: "completed", completed_at: t.clock.now().toISOString() });
    expect((await getDevice(id)).status).toBe("wiped");

    // The wiped device's token is refused; every further move is a conflict and changes nothing.
    const refused = await checkIn(t, deviceToken);
    expect(refused.status).toBe(401);
    for (const [method, path, body] of [
      ["PUT", `${device(id)}/status`, { status: "suspended", reason: "x" }],
      ["PUT", `${device(id)}/status`, { status: "online" }],
      ["POST", `${device(id)}/wipe`, { reason: "again" }],
      ["PUT", `${device(id)}/policy`, { policy_id: null }],
    ] as const) {
      const response = await t.request(method, path, { token: admin, body });
      expect(response.status, `${method} ${path}`).toBe(409);
    }
    expect((await getDevice(id)).status).toBe("wiped");

    // Deletion.
    const deleted = await t.request("DELETE", device(id), { token: admin });
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeNull();
    expect((await t.request("GET", device(id), { token: admin })).status).toBe(404);
    const organization = await t.request("GET", "/api/v1/organizations/current", { token: admin });
    expect(organization.body.device_count).toBe(0);

    const lifecycle = (await recordedEvents(t, org.organizationId))
      .map((event) => event.type)
      .filter((type) => type !== "device.compliance_changed");
    expect(lifecycle).toEqual([
      "device.enrolled",
      "device.suspended",
      "device.unsuspended",
      "device.wipe_requested",
      "device.wiped",
      "device.deleted",
    ]);
    for (const event of await recordedEvents(t, org.organizationId)) {
      expect(event.data).toMatchObject({
        device_id: id,
        device_name: enrolled.body.device_name,
        platform: "macos",
      });
    }
    const audit = await t.request("GET", "/api/v1/audit-logs?page_size=100", { token: admin });
    const actions = audit.body.data.map((entry: { action: string }) => entry.action);
    for (const action of [
      "device.suspend",
      "device.unsuspend",
      "device.wipe",
      "device.wipe_complete",
      "device.delete",
    ]) {
      expect(actions).toContain(action);
    }
  },
);
