import { afterAll, describe, expect, test } from "bun:test";
import { and, count, eq } from "drizzle-orm";
import { withTransaction } from "../../src/db/client";
import { firstRow } from "../../src/db/first-row";
import { deviceLogs, devices, deviceTokens, enrollmentTokens } from "../../src/db/tables";
import { enrollDevice as enrollDirectly } from "../../src/domain/devices/enroll-device";
import { JOBS } from "../../src/jobs/jobs";
import {
  checkIn,
  createDeviceTestApp,
  createEnrollmentToken,
  enrollDevice,
  HEALTHY_FACTS,
  recordedEvents,
  wipeDevice,
} from "../helpers/devices";

const OFFLINE_AFTER = 900;
const WIPE_TIMEOUT = 3600;
const LOG_RETENTION_DAYS = 10;
const t = await createDeviceTestApp({
  devices: {
    offline_after_seconds: OFFLINE_AFTER,
    wipe_timeout_seconds: WIPE_TIMEOUT,
    log_retention_days: LOG_RETENTION_DAYS,
  },
  jobs: { scan_interval_seconds: 30 },
  // 1,200 devices in one organization: the default /20 subnets (test apps use /22s).
  vpn: { organization_prefix_length: 20 },
});
afterAll(() => t.close());

/** Runs one job of the one list by id, as the scheduler would. */
async function runJob(id: string) {
  const job = JOBS.find((candidate) => candidate.id === id);
  if (!job) throw new Error(`no job ${id}`);
  return await job.run(t.deps);
}

const statusOf = async (adminToken: string, deviceId: string) =>
  (await t.request("GET", `/api/v1/devices/${deviceId}`, { token: adminToken })).body.status;

describe("the device jobs", () => {
  test("are registered in the one list, at jobs.scan_interval_seconds", () => {
    for (const id of [
      "mark-offline-devices",
      "time-out-wipes",
      "purge-expired-device-credentials",
      "reevaluate-stale-compliance",
      "purge-device-logs",
    ]) {
      const job = JOBS.find((candidate) => candidate.id === id);
      expect(job?.intervalSeconds(t.config)).toBe(30);
    }
  });
});

describe("mark-offline-devices", () => {
  test("marks online devices silent for longer than offline_after_seconds offline, once, with an event", async () => {
    const org = await t.createOrganization();
    const silent = await enrollDevice(t, org.adminToken);
    const chatty = await enrollDevice(t, org.adminToken);
    const suspended = await enrollDevice(t, org.adminToken);
    await t.request("PUT", `/api/v1/devices/${suspended.id}/status`, {
      token: org.adminToken,
      body: { status: "suspended", reason: "hold" },
    });

    t.clock.advanceSeconds(OFFLINE_AFTER - 10);
    await checkIn(t, chatty.device_token);
    await runJob("mark-offline-devices");
    expect(await statusOf(org.adminToken, silent.id)).toBe("online");

    t.clock.advanceSeconds(11);
    await runJob("mark-offline-devices");
    expect(await statusOf(org.adminToken, silent.id)).toBe("offline");
    expect(await statusOf(org.adminToken, chatty.id)).toBe("online");
    expect(await statusOf(org.adminToken, suspended.id)).toBe("suspended");

    await runJob("mark-offline-devices");
    const events = await recordedEvents(t, org.organizationId, "device.offline");
    expect(events.map((event) => event.data)).toEqual([
      {
        device_id: silent.id,
        device_name: silent.device_name,
        platform: "macos",
        last_seen: expect.any(String),
      },
    ]);
    const logs = await t.request("GET", `/api/v1/devices/${silent.id}/logs?event=device.offline`, {
      token: org.adminToken,
    });
    expect(logs.body.total).toBe(1);

    // A check-in brings it back.
    expect((await checkIn(t, silent.device_token)).body.status).toBe("online");
  });

  test("handles more devices than one batch", async () => {
    const org = await t.createOrganization();
    const { token } = await createEnrollmentToken(t, org.adminToken, { max_uses: null });
    for (let index = 0; index < 510; index++) {
      // Straight through the domain: 510 HTTP enrollments would only slow the test down.
      await enrollDirectly(t.deps, {
        enrollmentToken: token,
        deviceName: `kiosk ${index}`,
        platform: "linux",
        agentVersion: "1.0",
        hardwareId: `KIOSK-${index}`,
        ip: null,
      });
    }
    t.clock.advanceSeconds(OFFLINE_AFTER + 1);
    expect(await runJob("mark-offline-devices")).toBeGreaterThanOrEqual(510);
    const online = await t.request("GET", "/api/v1/devices?status=online", { token: org.adminToken });
    expect(online.body.total).toBe(0);
    const offline = await t.request("GET", "/api/v1/devices?status=offline", { token: org.adminToken });
    expect(offline.body.total).toBe(510);
  }, 30_000);
});

describe("time-out-wipes", () => {
  test("a wipe still pending after wipe_timeout_seconds times out; the agent no longer receives it", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken);
    const wipe = await t.request("POST", `/api/v1/devices/${enrolled.id}/wipe`, {
      token: org.adminToken,
      body: { reason: "lost" },
    });
    const poll = async () =>
      (
        await t.request("GET", `/api/v1/devices/${enrolled.id}/wipe/${wipe.body.wipe_id}`, {
          token: org.adminToken,
        })
      ).body;

    t.clock.advanceSeconds(WIPE_TIMEOUT - 1);
    await runJob("time-out-wipes");
    expect((await poll()).status).toBe("pending");

    t.clock.advanceSeconds(2);
    await runJob("time-out-wipes");
    expect(structuredClone(await poll())).toMatchObject({
      status: "timed_out",
      completed_at: t.clock.now().toISOString(),
      error: `not confirmed by the device within ${WIPE_TIMEOUT} seconds`,
    });
    expect((await checkIn(t, enrolled.device_token)).body.commands).toEqual([]);
    const late = await t.request("POST", `/api/v1/agent/wipes/${wipe.body.wipe_id}/complete`, {
      token: enrolled.device_token,
      body: { success: true },
    });
    expect(late.status).toBe(409);
    // The device is not wiped and a new wipe may be requested.
    expect(await statusOf(org.adminToken, enrolled.id)).toBe("online");
    const again = await t.request("POST", `/api/v1/devices/${enrolled.id}/wipe`, {
      token: org.adminToken,
      body: { reason: "second attempt" },
    });
    expect(again.status).toBe(202);
  });
});

describe("purge-expired-device-credentials", () => {
  test("deletes revoked and expired device tokens, and enrollment tokens 30 days after expiry or revocation", async () => {
    const org = await t.createOrganization();
    const live = await enrollDevice(t, org.adminToken);
    const wiped = await enrollDevice(t, org.adminToken);
    await wipeDevice(t, org.adminToken, wiped, "done");
    const shortLived = await createEnrollmentToken(t, org.adminToken, { expires_in_hours: 1 });
    const longLived = await createEnrollmentToken(t, org.adminToken, { expires_in_hours: 24 * 365 });
    const revoked = await createEnrollmentToken(t, org.adminToken, { expires_in_hours: 24 * 365 });
    t.clock.advanceSeconds(7200);
    await t.request("DELETE", `/api/v1/enrollment-tokens/${revoked.id}`, { token: org.adminToken });

    await runJob("purge-expired-device-credentials");
    const tokensOf = async (deviceId: string) =>
      await t.deps.db.select().from(deviceTokens).where(eq(deviceTokens.deviceId, deviceId));
    expect(await tokensOf(wiped.id)).toHaveLength(0);
    expect(await tokensOf(live.id)).toHaveLength(1);
    const ours = [shortLived.id, longLived.id, revoked.id];
    const remaining = async () =>
      (
        await t.deps.db
          .select({ id: enrollmentTokens.id })
          .from(enrollmentTokens)
          .where(eq(enrollmentTokens.organizationId, org.organizationId))
      )
        .map((row) => row.id)
        .filter((id) => ours.includes(id))
        .sort();
    // Expired and revoked tokens stay listed, as such, for the grace period.
    expect(await remaining()).toEqual([...ours].sort());
    const listed = await t.request("GET", "/api/v1/enrollment-tokens", { token: org.adminToken });
    const stateOf = (id: string) =>
      listed.body.data.find((token: { id: string; state: string }) => token.id === id)?.state;
    expect(ours.map(stateOf)).toEqual(["expired", "active", "revoked"]);

    t.clock.advanceSeconds(30 * 86400 - 7200);
    await runJob("purge-expired-device-credentials");
    expect(await remaining()).toEqual([...ours].sort());
    t.clock.advanceSeconds(7200 + 1);
    await runJob("purge-expired-device-credentials");
    expect(await remaining()).toEqual([longLived.id]);
    expect((await checkIn(t, live.device_token)).status).toBe(200);
  });

  test("a device token past its year is refused, then purged", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken);
    t.clock.advanceSeconds(365 * 86400);
    const refused = await checkIn(t, enrolled.device_token);
    expect(refused.status).toBe(401);
    expect(refused.body.details).toBe("the device token has expired");
    t.clock.advanceSeconds(1);
    await runJob("purge-expired-device-credentials");
    expect(
      await t.deps.db.select().from(deviceTokens).where(eq(deviceTokens.deviceId, enrolled.id)),
    ).toHaveLength(0);
  });
});

describe("reevaluate-stale-compliance", () => {
  const staleCount = async (organizationId: string) =>
    (
      await firstRow(
        t.deps.db
          .select({ value: count() })
          .from(devices)
          .where(and(eq(devices.organizationId, organizationId), eq(devices.complianceStale, true))),
      )
    )?.value;
  const statusCount = async (organizationId: string, status: "compliant" | "non_compliant") =>
    (
      await firstRow(
        t.deps.db
          .select({ value: count() })
          .from(devices)
          .where(and(eq(devices.organizationId, organizationId), eq(devices.complianceStatus, status))),
      )
    )?.value;

  test("a policy change evaluates the first batch at once; the job drains the rest in batches that let other changes in between", async () => {
    const org = await t.createOrganization();
    const { token } = await createEnrollmentToken(t, org.adminToken, { max_uses: null });
    const total = 1200;
    for (let index = 0; index < total; index++) {
      await enrollDirectly(t.deps, {
        enrollmentToken: token,
        deviceName: `laptop ${index}`,
        platform: "linux",
        agentVersion: "1.0",
        hardwareId: `FLEET-${index}`,
        ip: null,
      });
    }
    // Every device reports an unencrypted disk: non-compliant under the default policy.
    await withTransaction(
      t.deps.db,
      async (tx) =>
        await tx
          .update(devices)
          .set({ facts: { ...HEALTHY_FACTS, disk_encrypted: false }, complianceStatus: "non_compliant" })
          .where(eq(devices.organizationId, org.organizationId)),
    );
    const defaultPolicy = await t.request("GET", "/api/v1/policies/default", { token: org.adminToken });

    const update = await t.request("PUT", `/api/v1/policies/${defaultPolicy.body.id}`, {
      token: org.adminToken,
      body: { policy_data: { storage: { encryption_required: false } } },
    });
    expect(update.status).toBe(200);
    expect(update.body.device_count).toBe(total);
    expect(await statusCount(org.organizationId, "compliant")).toBe(500);
    expect(await staleCount(org.organizationId)).toBe(total - 500);

    // Each batch is a transaction of its own: a change asked for while the first batch runs is made
    // before the second (transactions take the writer in turn).
    const run = runJob("reevaluate-stale-compliance");
    const meanwhile = await t.request("POST", "/api/v1/policies", {
      token: org.adminToken,
      body: { name: "Made while the job runs", policy_data: {} },
    });
    expect(meanwhile.status).toBe(201);
    expect(await run).toBe(total - 500);
    const order = (await recordedEvents(t, org.organizationId))
      .map((event) => event.type)
      .filter((type) => type === "device.compliance_changed" || type === "policy.created");
    // 500 flips by the policy change itself, 500 by the job's first batch, the new policy, the last 200.
    expect(order).toHaveLength(total + 1);
    expect(order.indexOf("policy.created")).toBe(1000);
    expect(await staleCount(org.organizationId)).toBe(0);
    expect(await statusCount(org.organizationId, "compliant")).toBe(total);
    const flips = await recordedEvents(t, org.organizationId, "device.compliance_changed");
    expect(flips).toHaveLength(total);
    expect(flips[0]?.data).toMatchObject({ previous_status: "non_compliant", status: "compliant" });
    expect(await runJob("reevaluate-stale-compliance")).toBe(0);
  }, 30_000);

  test("a check-in evaluates its own device and clears its stale flag", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken);
    await withTransaction(
      t.deps.db,
      async (tx) =>
        await tx.update(devices).set({ complianceStale: true }).where(eq(devices.id, enrolled.id)),
    );
    expect(await staleCount(org.organizationId)).toBe(1);
    const response = await checkIn(t, enrolled.device_token, { facts: HEALTHY_FACTS });
    expect(response.body.compliance.status).toBe("compliant");
    expect(await staleCount(org.organizationId)).toBe(0);
  });
});

describe("purge-device-logs", () => {
  test("deletes log entries older than devices.log_retention_days and keeps the rest", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken);
    t.clock.advanceSeconds(LOG_RETENTION_DAYS * 86400 - 60);
    await checkIn(t, enrolled.device_token);
    const logsOf = async () =>
      (
        await t.deps.db
          .select({ event: deviceLogs.event })
          .from(deviceLogs)
          .where(eq(deviceLogs.deviceId, enrolled.id))
      )
        .map((row) => row.event)
        .sort();
    expect(await logsOf()).toEqual(["device.checkin", "device.enrolled"]);

    await runJob("purge-device-logs");
    expect(await logsOf()).toEqual(["device.checkin", "device.enrolled"]);
    t.clock.advanceSeconds(61);
    expect(await runJob("purge-device-logs")).toBeGreaterThanOrEqual(1);
    expect(await logsOf()).toEqual(["device.checkin"]);
  });
});
