import { afterAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { organizations } from "../../src/db/schema";
import { selectDeviceLogPage } from "../../src/domain/devices/list-device-logs";
import { type DeviceListFilter, selectDevicePage } from "../../src/domain/devices/list-devices";
import { createDeviceTestApp, enrollDevice } from "./devices-fixtures";

const t = await createDeviceTestApp();
afterAll(() => t.close());

/** SQLite's plan for a query builder's statement: one line per step. */
function planOf(query: { toSQL(): { sql: string; params: unknown[] } }): string[] {
  const { sql, params } = query.toSQL();
  const statement = t.deps.db.$client.prepare(`EXPLAIN QUERY PLAN ${sql}`);
  return (statement.all(...(params as never[])) as { detail: string }[]).map((row) => row.detail);
}

const PAGE = { page: 3, pageSize: 20 };

describe("device list and log queries read pages straight from an index", () => {
  const filters: [string, DeviceListFilter, string][] = [
    ["no filter", {}, "devices_organization_idx"],
    ["status", { status: "online" }, "devices_organization_status_idx"],
    ["platform", { platform: "linux" }, "devices_organization_platform_idx"],
    ["user", { userId: "00000000-0000-7000-8000-000000000000" }, "devices_organization_user_idx"],
  ];
  for (const [name, filter, index] of filters) {
    test(`devices, ${name}: ${index}, no table scan, no sort`, () => {
      const plan = planOf(selectDevicePage(t.deps.db, "organization", filter, PAGE)).join("\n");
      expect(plan).toContain(index);
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

test("the unfiltered total is the organization's maintained device count, kept by enroll and delete", async () => {
  const org = await t.createOrganization();
  const enrolled = [];
  for (let index = 0; index < 3; index++) enrolled.push(await enrollDevice(t, org.adminToken));
  const total = async () => (await t.request("GET", "/api/v1/devices", { token: org.adminToken })).body.total;
  expect(await total()).toBe(3);

  const [gone] = enrolled;
  if (!gone) throw new Error("no device");
  const wipe = await t.request("POST", `/api/v1/devices/${gone.id}/wipe`, {
    token: org.adminToken,
    body: { reason: "retired" },
  });
  await t.request("POST", `/api/v1/agent/wipes/${wipe.body.wipe_id}/complete`, {
    token: gone.device_token,
    body: { success: true },
  });
  await t.request("DELETE", `/api/v1/devices/${gone.id}`, { token: org.adminToken });
  expect(await total()).toBe(2);

  // The count is read, not computed: a stored count that disagrees shows through.
  t.deps.db
    .update(organizations)
    .set({ deviceCount: 7 })
    .where(eq(organizations.id, org.organizationId))
    .run();
  expect(await total()).toBe(7);
  const filtered = await t.request("GET", "/api/v1/devices?platform=macos", { token: org.adminToken });
  expect(filtered.body.total).toBe(2);
});
