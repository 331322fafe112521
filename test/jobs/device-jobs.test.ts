import { afterAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { deviceTokens, enrollmentTokens } from "../../src/db/schema";
import { enrollDevice as enrollDirectly } from "../../src/domain/devices/enroll-device";
import { JOBS } from "../../src/jobs/jobs";
import {
  checkIn,
  createDeviceTestApp,
  createEnrollmentToken,
  enrollDevice,
  recordedEvents,
} from "../http/devices-fixtures";

const OFFLINE_AFTER = 900;
const WIPE_TIMEOUT = 3600;
const t = await createDeviceTestApp({
  devices: { offline_after_seconds: OFFLINE_AFTER, wipe_timeout_seconds: WIPE_TIMEOUT },
  jobs: { scan_interval_seconds: 30 },
});
afterAll(() => t.close());

/** Runs one job of the one list by id, as the scheduler would. */
function runJob(id: string) {
  const job = JOBS.find((candidate) => candidate.id === id);
  if (!job) throw new Error(`no job ${id}`);
  return job.run(t.deps);
}

const statusOf = async (adminToken: string, deviceId: string) =>
  (await t.request("GET", `/api/v1/devices/${deviceId}`, { token: adminToken })).body.status;

describe("the device jobs", () => {
  test("are registered in the one list, at jobs.scan_interval_seconds", () => {
    for (const id of ["mark-offline-devices", "time-out-wipes", "purge-expired-device-credentials"]) {
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
    const events = recordedEvents(t, org.organizationId, "device.offline");
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
      enrollDirectly(t.deps, {
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
  });
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
  test("deletes revoked and expired device tokens and expired enrollment tokens, and nothing live", async () => {
    const org = await t.createOrganization();
    const live = await enrollDevice(t, org.adminToken);
    const wiped = await enrollDevice(t, org.adminToken);
    const wipe = await t.request("POST", `/api/v1/devices/${wiped.id}/wipe`, {
      token: org.adminToken,
      body: { reason: "done" },
    });
    await t.request("POST", `/api/v1/agent/wipes/${wipe.body.wipe_id}/complete`, {
      token: wiped.device_token,
      body: { success: true },
    });
    const shortLived = await createEnrollmentToken(t, org.adminToken, { expires_in_hours: 1 });
    const longLived = await createEnrollmentToken(t, org.adminToken, { expires_in_hours: 48 });
    t.clock.advanceSeconds(7200);

    await runJob("purge-expired-device-credentials");
    const tokensOf = (deviceId: string) =>
      t.deps.db.select().from(deviceTokens).where(eq(deviceTokens.deviceId, deviceId)).all();
    expect(tokensOf(wiped.id)).toHaveLength(0);
    expect(tokensOf(live.id)).toHaveLength(1);
    const remaining = t.deps.db
      .select({ id: enrollmentTokens.id })
      .from(enrollmentTokens)
      .where(eq(enrollmentTokens.organizationId, org.organizationId))
      .all()
      .map((row) => row.id);
    expect(remaining).toContain(longLived.id);
    expect(remaining).not.toContain(shortLived.id);
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
      t.deps.db.select().from(deviceTokens).where(eq(deviceTokens.deviceId, enrolled.id)).all(),
    ).toHaveLength(0);
  });
});
