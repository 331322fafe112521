import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { eq, sql } from "drizzle-orm";
import { runStatement } from "../../src/db/dialect";
import { devices as devicesTable } from "../../src/db/tables";
import { authenticateDeviceToken } from "../../src/domain/devices/authenticate-device";
import { checkIn, enrollDevice, HEALTHY_FACTS } from "../helpers/devices";
import { expectServerErrors } from "../helpers/server-errors";
import { freshTestApps, inProcessTest, type TestApp } from "../helpers/test-app";

/** Takes the lock a check-in's writes need from another connection; resolves to its release. */
async function holdWriteLock(t: TestApp, path: string): Promise<() => Promise<void>> {
  if (t.store === "sqlite") {
    t.writer.exec("PRAGMA busy_timeout = 100");
    const other = new Database(path);
    other.exec("BEGIN IMMEDIATE");
    return async () => {
      other.exec("COMMIT");
      other.close();
    };
  }
  const other = new SQL(t.config.database.url, { max: 1 });
  const connection = await other.reserve();
  await connection`BEGIN`;
  await connection`LOCK TABLE devices IN EXCLUSIVE MODE`;
  return async () => {
    await connection`COMMIT`;
    connection.release();
    await other.close();
  };
}

/**
 * Makes the database refuse the device log entries of one device (a trigger), as a failing disk or a
 * constraint would; resolves to the function that takes the trigger away.
 */
async function refuseLogsOf(t: TestApp, deviceId: string): Promise<() => Promise<void>> {
  if (t.store === "sqlite") {
    t.writer.exec(
      `CREATE TEMP TRIGGER refuse_log BEFORE INSERT ON device_logs WHEN new.device_id = '${deviceId}' BEGIN SELECT RAISE(ABORT, 'refused'); END`,
    );
    return async () => {
      t.writer.exec("DROP TRIGGER refuse_log");
    };
  }
  await runStatement(
    t.deps.db,
    sql.raw(`CREATE FUNCTION refuse_log() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN IF NEW.device_id = '${deviceId}' THEN RAISE EXCEPTION 'refused'; END IF; RETURN NEW; END $$`),
  );
  await runStatement(
    t.deps.db,
    sql.raw(
      "CREATE TRIGGER refuse_log BEFORE INSERT ON device_logs FOR EACH ROW EXECUTE FUNCTION refuse_log()",
    ),
  );
  return async () => {
    await runStatement(t.deps.db, sql.raw("DROP TRIGGER refuse_log ON device_logs"));
    await runStatement(t.deps.db, sql.raw("DROP FUNCTION refuse_log()"));
  };
}

const newApp = freshTestApps({ rate_limit: { unauthenticated_per_minute: 100_000 } });
const folder = mkdtempSync(join(tmpdir(), "bulwark-checkin-batch-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

async function checkInEntries(t: TestApp, adminToken: string, deviceId: string): Promise<unknown[]> {
  const response = await t.request(
    "GET",
    `/api/v1/devices/${deviceId}/logs?event=device.checkin&page_size=100`,
    {
      token: adminToken,
    },
  );
  expect(response.status).toBe(200);
  return response.body.data.map((entry: { details: unknown }) => entry.details);
}

describe("device.checkin entries", () => {
  inProcessTest(
    "a heartbeat that reports nothing new is logged once an hour; a change in versions, facts or compliance at once",
    async () => {
      const t = await newApp();
      const org = await t.createOrganization();
      const device = await enrollDevice(t, org.adminToken);
      const heartbeat = { agent_version: "1.4.0", os_version: "14.4", facts: HEALTHY_FACTS };
      const count = async () => (await checkInEntries(t, org.adminToken, device.id)).length;

      expect((await checkIn(t, device.device_token, heartbeat)).status).toBe(200);
      expect(await count()).toBe(1);
      for (let minute = 1; minute <= 3; minute++) {
        t.clock.advanceSeconds(60);
        expect((await checkIn(t, device.device_token, heartbeat)).status).toBe(200);
        // The device row always has the latest, logged or not.
        const current = await t.request("GET", `/api/v1/devices/${device.id}`, { token: org.adminToken });
        expect(current.body.last_seen).toBe(t.now().toISOString());
      }
      expect(await count()).toBe(1);

      // Facts in another order are the same report.
      const reordered = Object.fromEntries(Object.entries(HEALTHY_FACTS).reverse());
      await checkIn(t, device.device_token, { ...heartbeat, facts: reordered });
      expect(await count()).toBe(1);

      // A changed fact (which also changes compliance) is logged at once, then heartbeats are quiet again.
      const unencrypted = { ...heartbeat, facts: { ...HEALTHY_FACTS, disk_encrypted: false } };
      await checkIn(t, device.device_token, unencrypted);
      await checkIn(t, device.device_token, unencrypted);
      expect(await count()).toBe(2);
      const compliance = await t.request("GET", `/api/v1/devices/${device.id}/compliance`, {
        token: org.adminToken,
      });
      expect(compliance.body.status).toBe("non_compliant");

      await checkIn(t, device.device_token, { ...unencrypted, agent_version: "1.5.0" });
      await checkIn(t, device.device_token, { ...unencrypted, agent_version: "1.5.0", os_version: "14.5" });
      expect(await count()).toBe(4);

      // An hour after the last entry, an unchanged heartbeat is logged again.
      const same = { ...unencrypted, agent_version: "1.5.0", os_version: "14.5" };
      t.clock.advanceSeconds(3599);
      await checkIn(t, device.device_token, same);
      expect(await count()).toBe(4);
      t.clock.advanceSeconds(1);
      await checkIn(t, device.device_token, same);
      const entries = await checkInEntries(t, org.adminToken, device.id);
      expect(entries).toHaveLength(5);
      expect(entries[0]).toEqual({
        agent_version: "1.5.0",
        os_version: "14.5",
        policy_version: null,
        facts: { ...HEALTHY_FACTS, disk_encrypted: false },
      });
    },
  );

  test("devices.checkin_log_interval_seconds = 0 logs every check-in", async () => {
    const t = await newApp({ devices: { checkin_log_interval_seconds: 0 } });
    const org = await t.createOrganization();
    const device = await enrollDevice(t, org.adminToken);
    for (let index = 0; index < 3; index++)
      expect((await checkIn(t, device.device_token, { facts: HEALTHY_FACTS })).status).toBe(200);
    expect(await checkInEntries(t, org.adminToken, device.id)).toHaveLength(3);
  });
});

describe("group commit", () => {
  inProcessTest(
    "check-ins queued together are committed in one transaction and each gets its own answer after it; one that fails fails alone",
    async () => {
      const t = await newApp({ metrics: { enabled: true } });
      const org = await t.createOrganization();
      const devices = [];
      for (let index = 0; index < 12; index++) devices.push(await enrollDevice(t, org.adminToken));
      const principals = await Promise.all(
        devices.map(async (device) => await authenticateDeviceToken(t.deps, device.device_token)),
      );
      // The last device is wiped after it authenticated: inside the batch, its check-in is refused.
      const wiped = devices[11] as (typeof devices)[number];
      const wipe = await t.request("POST", `/api/v1/devices/${wiped.id}/wipe`, {
        token: org.adminToken,
        body: { reason: "lost" },
      });
      const completed = await t.request("POST", `/api/v1/agent/wipes/${wipe.body.wipe_id}/complete`, {
        token: wiped.device_token,
        body: { success: true },
      });
      expect(completed.status).toBe(200);
      const batches = async () => {
        const text = (await t.request("GET", "/metrics")).body as string;
        const value = (name: string) => Number(new RegExp(`^${name} (\\d+)`, "m").exec(text)?.[1] ?? 0);
        return {
          count: value("bulwark_checkin_batch_size_count"),
          sum: value("bulwark_checkin_batch_size_sum"),
        };
      };
      const before = await batches();

      // The 6th device's log entry is refused by the database: its check-in fails inside its savepoint,
      // after its device row was written, and that write is undone while the others, before and after
      // it in the batch, are kept.
      const refusedLog = devices[5] as (typeof devices)[number];
      const allowLogs = await refuseLogsOf(t, refusedLog.id);
      // Whether the batch was committed when each answer came: on SQLite the writer connection has
      // left its transaction; on PostgreSQL another connection, asked at once, sees the check-in saved.
      const committedWhenAnswered: Promise<boolean>[] = [];
      const isCommitted = async (deviceId: string, version: string) =>
        t.store === "sqlite"
          ? !t.writer.inTransaction
          : (
              await t.deps.db
                .select({ version: devicesTable.agentVersion })
                .from(devicesTable)
                .where(eq(devicesTable.id, deviceId))
            )[0]?.version === version;

      // Queued in one turn of the event loop, as requests that arrive together are.
      const outcomes = await Promise.allSettled(
        principals.map((principal, index) =>
          t.deps.checkIns
            .checkIn(principal, { agentVersion: `3.0.${index}`, facts: HEALTHY_FACTS })
            .then((result) => {
              committedWhenAnswered.push(isCommitted(principal.deviceId, `3.0.${index}`));
              return result;
            }),
        ),
      );
      await allowLogs();
      // Every answer came after the commit (the check-ins that were saved: all but the 6th and 12th).
      expect(await Promise.all(committedWhenAnswered)).toEqual(Array(10).fill(true));

      const failedInSavepoint = outcomes[5];
      expect(failedInSavepoint?.status).toBe("rejected");
      const untouched = await t.request("GET", `/api/v1/devices/${refusedLog.id}`, { token: org.adminToken });
      expect(untouched.body.agent_version).toBe("1.4.0");
      for (const [index, outcome] of outcomes.slice(0, 11).entries()) {
        if (index === 5) continue;
        expect(outcome.status).toBe("fulfilled");
        const device = devices[index] as (typeof devices)[number];
        if (outcome.status === "fulfilled") expect(outcome.value.device_id).toBe(device.id);
        const stored = await t.request("GET", `/api/v1/devices/${device.id}`, {
          token: org.adminToken,
        });
        expect(stored.body.agent_version).toBe(`3.0.${index}`);
      }
      const refused = outcomes[11];
      expect(refused?.status).toBe("rejected");
      if (refused?.status === "rejected") expect(refused.reason.reason).toBe("device_wiped");
      expect(await batches()).toEqual({ count: before.count + 1, sum: before.sum + 12 });
    },
  );

  inProcessTest(
    "a device that checks in several times in one batch: each check-in follows the one before it, and the device keeps the last",
    async () => {
      const t = await newApp({ metrics: { enabled: true } });
      const org = await t.createOrganization();
      const device = await enrollDevice(t, org.adminToken);
      const principal = await authenticateDeviceToken(t.deps, device.device_token);
      const batchSizes = async () =>
        Number(
          /^bulwark_checkin_batch_size_sum (\d+)/m.exec((await t.request("GET", "/metrics")).body)?.[1] ?? 0,
        );
      const before = await batchSizes();
      const unencrypted = { ...HEALTHY_FACTS, disk_encrypted: false };
      // Queued in one turn of the event loop: one batch.
      const answers = await Promise.all([
        t.deps.checkIns.checkIn(principal, { agentVersion: "2.0.0", facts: HEALTHY_FACTS }),
        t.deps.checkIns.checkIn(principal, { agentVersion: "2.0.0", facts: HEALTHY_FACTS }),
        t.deps.checkIns.checkIn(principal, { agentVersion: "2.1.0", facts: unencrypted }),
      ]);
      expect(await batchSizes()).toBe(before + 3);
      expect(answers.map((answer) => answer.compliance.status)).toEqual([
        "compliant",
        "compliant",
        "non_compliant",
      ]);

      const stored = await t.request("GET", `/api/v1/devices/${device.id}`, { token: org.adminToken });
      expect(stored.body).toMatchObject({ agent_version: "2.1.0", status: "online" });
      expect(stored.body.facts).toEqual(unencrypted);
      // The second reported nothing new: not logged. The first and third changed the report.
      const entries = await checkInEntries(t, org.adminToken, device.id);
      expect(entries.map((entry) => (entry as { agent_version: string }).agent_version)).toEqual([
        "2.1.0",
        "2.0.0",
      ]);
      const changes = await t.request(
        "GET",
        `/api/v1/devices/${device.id}/logs?event=device.compliance_changed&page_size=100`,
        { token: org.adminToken },
      );
      expect(
        changes.body.data.map((entry: { details: { previous_status: string; status: string } }) => [
          entry.details.previous_status,
          entry.details.status,
        ]),
      ).toEqual([
        ["compliant", "non_compliant"],
        ["unknown", "compliant"],
      ]);
    },
  );

  inProcessTest(
    "a batch that cannot be committed answers each of its check-ins with a 503, keeps none of them, and the next one succeeds",
    async () => {
      const t = await newApp({ database: { path: join(folder, "locked.db"), timeout_seconds: 1 } });
      const org = await t.createOrganization();
      const devices = [];
      for (let index = 0; index < 3; index++) devices.push(await enrollDevice(t, org.adminToken));
      // Another process (a backup tool, a second writer) holds a lock past the time the server waits
      // for one: SQLite's write lock past the busy timeout, or a PostgreSQL table lock past
      // database.timeout_seconds (statement_timeout).
      const releaseLock = await holdWriteLock(t, join(folder, "locked.db"));
      expectServerErrors(503);
      const answers = await Promise.all(
        devices.map((device) => checkIn(t, device.device_token, { agent_version: "9.9.9" })),
      );
      for (const answer of answers) {
        expect(answer.status).toBe(503);
        expect(answer.body).toMatchObject({
          reason: "database_unavailable",
          details: "the check-in could not be saved; check in again",
        });
      }
      expect(t.logLines.some((line) => line.includes("check-ins could not be saved"))).toBe(true);
      await releaseLock();

      for (const device of devices) {
        const stored = await t.request("GET", `/api/v1/devices/${device.id}`, { token: org.adminToken });
        expect(stored.body.agent_version).toBe("1.4.0");
        expect(await checkInEntries(t, org.adminToken, device.id)).toHaveLength(0);
      }
      expect(
        (await checkIn(t, (devices[0] as (typeof devices)[number]).device_token, { agent_version: "9.9.9" }))
          .status,
      ).toBe(200);
    },
  );
});
