import { afterAll, expect, test } from "bun:test";
import { markOfflineDevices } from "../../src/domain/devices/mark-offline-devices";
import {
  checkIn,
  createDeviceTestApp,
  type Enrolled,
  enrollDevice,
  HEALTHY_FACTS,
  wipeDevice,
} from "../helpers/devices";

const t = await createDeviceTestApp({ devices: { offline_after_seconds: 900 } });
afterAll(() => t.close());

/** The kept counts and a count of the rows themselves, as comparable lists (zero rows left out). */
function countsAndTruth() {
  const sqlite = t.deps.db.$client;
  const kept = sqlite
    .query(
      "SELECT organization_id, status, platform, compliance_status, count FROM device_counts WHERE count != 0 ORDER BY 1, 2, 3, 4",
    )
    .all();
  const truth = sqlite
    .query(
      "SELECT organization_id, status, platform, compliance_status, count(*) AS count FROM devices GROUP BY 1, 2, 3, 4 ORDER BY 1, 2, 3, 4",
    )
    .all();
  return { kept, truth };
}

test("the counts kept by triggers match the devices through enrollment, check-ins, the offline job, suspension, wipe and deletion", async () => {
  const org = await t.createOrganization();
  const other = await t.createOrganization();
  const expectTrue = () => {
    const { kept, truth } = countsAndTruth();
    expect(kept).toEqual(truth);
  };
  const devices = [];
  for (const platform of ["linux", "windows", "macos", "windows"]) {
    devices.push(await enrollDevice(t, org.adminToken, { platform }));
  }
  await enrollDevice(t, other.adminToken, { platform: "ios" });
  expectTrue();

  const [first, second, third] = devices as [Enrolled, Enrolled, Enrolled, Enrolled];
  await checkIn(t, first.device_token, { facts: HEALTHY_FACTS });
  await checkIn(t, second.device_token, { facts: { ...HEALTHY_FACTS, disk_encrypted: false } });
  expectTrue();

  t.clock.advanceSeconds(1000);
  await markOfflineDevices(t.deps);
  expectTrue();
  await checkIn(t, third.device_token, { facts: HEALTHY_FACTS });
  expectTrue();

  const admin = { token: org.adminToken };
  expect(
    (
      await t.request("PUT", `/api/v1/devices/${first.id}/status`, {
        ...admin,
        body: { status: "suspended", reason: "audit" },
      })
    ).status,
  ).toBe(200);
  await wipeDevice(t, admin.token, second);
  expectTrue();
  expect((await t.request("DELETE", `/api/v1/devices/${second.id}`, admin)).status).toBe(204);
  expectTrue();

  // Filtered totals come from the kept counts and agree with the pages.
  for (const query of [
    "platform=windows",
    "status=offline",
    "status=offline&platform=windows",
    "compliance=compliant",
  ]) {
    const listed = await t.request("GET", `/api/v1/devices?${query}&page_size=100`, admin);
    expect(listed.body.total, query).toBe(listed.body.data.length);
  }
  const summary = await t.request("GET", "/api/v1/devices/summary", admin);
  expect(summary.body.total).toBe(3);
  expect(summary.body.by_status.suspended).toBe(1);
});

test("the triggers that keep the counts and the list version exist after every migration (a migration that rebuilds devices must recreate them)", () => {
  const triggers = t.deps.db.$client
    .query("SELECT name FROM sqlite_master WHERE type = 'trigger' AND tbl_name = 'devices' ORDER BY name")
    .all();
  expect(triggers).toEqual([
    { name: "devices_count_delete" },
    { name: "devices_count_insert" },
    { name: "devices_count_update" },
    { name: "devices_list_version_delete" },
    { name: "devices_list_version_insert" },
    { name: "devices_list_version_update" },
  ]);
});
