import { Database } from "bun:sqlite";
import { afterAll, describe, expect, test } from "bun:test";
import { count, eq } from "drizzle-orm";
import { firstRow } from "../../src/db/first-row";
import { devices, organizations } from "../../src/db/schema";
import { selectLatestWipe, selectPendingWipes } from "../../src/db/sqlite/device-lookups";
import { UNFILTERED_PAGE_STATEMENTS } from "../../src/db/sqlite/device-page-statements";
import { selectNewestCertificate } from "../../src/db/sqlite/pki-lookups";
import { selectPublicKeyHolder } from "../../src/domain/devices/enroll-device";
import { selectDeviceLogPage } from "../../src/domain/devices/list-device-logs";
import { type DeviceListFilter, selectDevicePage } from "../../src/domain/devices/list-devices";
import {
  selectAssignedDeviceCounts,
  selectPolicyDevicePage,
  selectUnassignedDeviceCount,
} from "../../src/domain/devices/policy-followers";
import { selectExpiredDeviceLogs } from "../../src/domain/devices/purge-device-logs";
import { selectStaleDevices } from "../../src/domain/devices/reevaluate-stale-devices";
import { selectComplianceCounts, selectStatusCounts } from "../../src/domain/devices/summarize-devices";
import { deleteExpiredEvents } from "../../src/domain/webhooks/purge-deliveries";
import { createDeviceTestApp, enrollDevice, wipeDevice } from "../helpers/devices";

const t = await createDeviceTestApp();
// Plans are read on a connection of their own: Bun leaves an EXPLAIN statement active, and an active
// statement would hold the app's reader on one snapshot.
const explainer = new Database(t.config.database.path, { readonly: true });
afterAll(() => {
  explainer.close();
  return t.close();
});

/** SQLite's plan for a query builder's statement: one line per step. */
function planOf(query: { toSQL(): { sql: string; params: unknown[] } }): string[] {
  const { sql, params } = query.toSQL();
  const statement = explainer.prepare(`EXPLAIN QUERY PLAN ${sql}`);
  return (statement.all(...(params as never[])) as { detail: string }[]).map((row) => row.detail);
}

const PAGE = { page: 3, pageSize: 20 };

describe("device list and log queries read pages straight from an index", () => {
  const filters: [string, DeviceListFilter, string][] = [
    ["status", { status: "online" }, "devices_organization_status_idx"],
    ["platform", { platform: "linux" }, "devices_organization_platform_idx"],
    ["user", { userId: "00000000-0000-7000-8000-000000000000" }, "devices_organization_user_idx"],
    ["compliance", { compliance: "non_compliant" }, "devices_organization_compliance_idx"],
    // A name search walks the organization's rows in the order of the index the other filters pick.
    ["name", { nameContains: "mac" }, "devices_organization_idx"],
    ["name and status", { nameContains: "mac", status: "online" }, "devices_organization_status_idx"],
  ];
  for (const [name, filter, index] of filters) {
    test(`devices, ${name}: ${index}, no table scan, no sort`, () => {
      const plan = planOf(selectDevicePage(t.deps.db, "organization", filter, PAGE)).join("\n");
      expect(plan).toContain(index);
      expect(plan).not.toMatch(/SCAN devices|TEMP B-TREE/);
    });
  }

  for (const [name, text] of Object.entries(UNFILTERED_PAGE_STATEMENTS)) {
    test(`devices, no filter, ${name}: devices_organization_idx, no table scan, no sort`, () => {
      const statement = explainer.prepare(`EXPLAIN QUERY PLAN ${text}`);
      const parameters = { organizationId: "o", enrolledAt: "2026", id: "d", limit: 20, offset: 40 };
      const used = Object.fromEntries(Object.entries(parameters).filter(([key]) => text.includes(`$${key}`)));
      const plan = (statement.all(used as never) as { detail: string }[]).map((row) => row.detail).join("\n");
      expect(plan).toContain("devices_organization_idx (organization_id=?");
      // The anchors are found from the index alone, never reading the table rows they skip.
      if (!name.startsWith("PAGE")) expect(plan).toContain("COVERING INDEX");
      expect(plan).not.toMatch(/SCAN devices|TEMP B-TREE/);
    });
  }

  test("device logs, unfiltered and by event", () => {
    const all = planOf(selectDeviceLogPage(t.deps.db, "device", {}, PAGE)).join("\n");
    expect(all).toContain("device_logs_device_idx");
    const byEvent = planOf(selectDeviceLogPage(t.deps.db, "device", { event: "device.checkin" }, PAGE)).join(
      "\n",
    );
    expect(byEvent).toContain("device_logs_device_event_idx");
    for (const plan of [all, byEvent]) expect(plan).not.toMatch(/SCAN device_logs|TEMP B-TREE/);
  });
});

test("the devices summary adds up the kept counts of the organization, never reading the devices", () => {
  for (const plan of [
    planOf(selectStatusCounts(t.deps.db, "organization")).join("\n"),
    planOf(selectComplianceCounts(t.deps.db, "organization")).join("\n"),
  ]) {
    expect(plan).toContain(
      "SEARCH device_counts USING INDEX sqlite_autoindex_device_counts_1 (organization_id=?)",
    );
    expect(plan).not.toMatch(/\bdevices\b/);
  }
});

describe("wipe and policy queries read only their own rows, through an index", () => {
  test("a device's pending wipes: wipes_device_status_idx, in order, no scan of pending wipes", () => {
    const plan = planOf(selectPendingWipes(t.deps.db, "device")).join("\n");
    expect(plan).toContain("wipes_device_status_idx (device_id=? AND status=?)");
    expect(plan).not.toMatch(/SCAN wipes|TEMP B-TREE|wipes_status_idx/);
  });

  test("the device page's newest wipe and certificate: read from an index's end, never sorted", () => {
    const wipe = planOf(selectLatestWipe(t.deps.db, "device")).join("\n");
    const certificate = planOf(selectNewestCertificate(t.deps.db, "device")).join("\n");
    expect(wipe).toContain("wipes_device_initiated_idx (device_id=?)");
    expect(certificate).toContain("device_certificates_device_idx (device_id=?)");
    // An empty sort still opens a sorter: it cost more than the rest of a device read.
    for (const plan of [wipe, certificate]) expect(plan).not.toMatch(/SCAN|TEMP B-TREE/);
    // One row read, under a literal LIMIT: a bound one is planned again at every run.
    for (const query of [
      selectLatestWipe(t.deps.db, "device"),
      selectNewestCertificate(t.deps.db, "device"),
    ]) {
      const { sql, params } = query.toSQL();
      expect([sql.endsWith(" limit 1"), params]).toEqual([true, ["device"]]);
    }
  });

  test("device counts of policies: one range of the policy index each, read from the index alone", () => {
    const assigned = planOf(selectAssignedDeviceCounts(t.deps.db, "organization", ["a", "b"])).join("\n");
    const unassigned = planOf(selectUnassignedDeviceCount(t.deps.db, "organization")).join("\n");
    for (const plan of [assigned, unassigned]) {
      expect(plan).toContain(
        "USING COVERING INDEX devices_organization_policy_idx (organization_id=? AND policy_id=?)",
      );
      expect(plan).not.toMatch(/SCAN devices|TEMP B-TREE/);
    }
  });

  for (const isDefault of [false, true]) {
    test(`a page of a${isDefault ? " default" : ""} policy's devices: the policy index, no scan, no sort`, () => {
      const plan = planOf(selectPolicyDevicePage(t.deps.db, "organization", "policy", isDefault, PAGE)).join(
        "\n",
      );
      expect(plan).toContain("devices_organization_policy_idx (organization_id=? AND policy_id=?)");
      expect(plan).not.toMatch(/SCAN devices|TEMP B-TREE/);
    });
  }
});

describe("maintenance lookups use their own index", () => {
  test("the holder of a public key: devices_vpn_public_key_unique", () => {
    const plan = planOf(selectPublicKeyHolder(t.deps.db, "key")).join("\n");
    expect(plan).toContain("devices_vpn_public_key_unique (vpn_public_key=?)");
  });

  test("a batch of stale devices, of one organization or of all: devices_compliance_stale_idx, no sort", () => {
    for (const organizationId of ["organization", undefined]) {
      const plan = planOf(selectStaleDevices(t.deps.db, organizationId, 500)).join("\n");
      expect(plan).toContain("devices_compliance_stale_idx");
      expect(plan).not.toMatch(/SCAN devices|TEMP B-TREE/);
    }
  });

  test("device log entries past retention: device_logs_created_idx", () => {
    const plan = planOf(selectExpiredDeviceLogs(t.deps.db, "2026-01-01T00:00:00.000Z", 5000)).join("\n");
    expect(plan).toContain("device_logs_created_idx (created_at<?)");
  });
});

test("the stored device count stays equal to the real count across enroll, wipe and delete", async () => {
  const org = await t.createOrganization();
  const stored = async () =>
    (
      await firstRow(
        t.deps.db
          .select({ value: organizations.deviceCount })
          .from(organizations)
          .where(eq(organizations.id, org.organizationId)),
      )
    )?.value;
  const real = async () =>
    (
      await firstRow(
        t.deps.db
          .select({ value: count() })
          .from(devices)
          .where(eq(devices.organizationId, org.organizationId)),
      )
    )?.value;
  const total = async () => (await t.request("GET", "/api/v1/devices", { token: org.adminToken })).body.total;
  const expectCount = async (expected: number) => {
    expect(await real()).toBe(expected);
    expect(await stored()).toBe(expected);
    expect(await total()).toBe(expected);
  };

  await expectCount(0);
  const enrolled = [];
  for (let index = 0; index < 3; index++) enrolled.push(await enrollDevice(t, org.adminToken));
  await expectCount(3);

  const [gone] = enrolled;
  if (!gone) throw new Error("no device");
  // A refused enrollment (hardware id taken) and a refused deletion (not wiped) change nothing.
  await enrollDevice(t, org.adminToken, { hardware_id: "SERIAL-DUP" });
  await expectCount(4);
  await expect(enrollDevice(t, org.adminToken, { hardware_id: "SERIAL-DUP" })).rejects.toThrow("409");
  await expectCount(4);
  expect((await t.request("DELETE", `/api/v1/devices/${gone.id}`, { token: org.adminToken })).status).toBe(
    409,
  );
  await expectCount(4);

  // A wiped device still counts until it is deleted.
  await wipeDevice(t, org.adminToken, gone, "retired");
  await expectCount(4);
  expect((await t.request("DELETE", `/api/v1/devices/${gone.id}`, { token: org.adminToken })).status).toBe(
    204,
  );
  await expectCount(3);
  const filtered = await t.request("GET", "/api/v1/devices?platform=macos", { token: org.adminToken });
  expect(filtered.body.total).toBe(3);
});

test("the outbox purge reads only expired events, and finds their deliveries by index", () => {
  const plan = planOf(deleteExpiredEvents(t.deps.db, "2026-01-01T00:00:00.000Z")).join("\n");
  expect(plan).toContain("events_created_idx");
  expect(plan).toContain("webhook_deliveries_event_idx");
  expect(plan).not.toMatch(/SCAN events|SCAN webhook_deliveries/);
});
