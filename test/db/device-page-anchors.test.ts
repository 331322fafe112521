import { afterAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { desc, eq } from "drizzle-orm";
import { ANCHOR_SPACING } from "../../src/db/device-page-anchors";
import { warmUpUnfilteredDevicePages } from "../../src/db/lookups";
import { deviceListAnchors, devices, organizations } from "../../src/db/tables";
import { createEnrollmentToken, type Enrolled, enrollBody } from "../helpers/devices";
import { createTestApp, type TestApp } from "../helpers/test-app";

// Deep pages of the unfiltered device list are read from anchors (device-page-anchors.ts), kept in memory
// and in device_list_anchors. Each page must hold exactly the rows a plain ORDER BY ... OFFSET gives,
// through enrollments, deletions, a clock that went back and a restart.

const SETTINGS = {
  rate_limit: { unauthenticated_per_minute: 100_000, enrollments_per_minute: 100_000 },
  // Over 2,000 devices in one organization: the default /20 subnets (test apps use /22s).
  vpn: { organization_prefix_length: 20 },
};

/** An organization of an app, with what its tests page and enroll with. */
interface Fleet {
  t: TestApp;
  organizationId: string;
  adminEmail: string;
  admin: { token: string };
  enrollmentToken: string;
}

async function newFleet(t: TestApp): Promise<Fleet> {
  const org = await t.createOrganization();
  const { token } = await createEnrollmentToken(t, org.adminToken, { max_uses: null });
  return {
    t,
    organizationId: org.organizationId,
    adminEmail: org.adminEmail,
    admin: { token: org.adminToken },
    enrollmentToken: token,
  };
}

async function enroll(fleet: Fleet, count: number): Promise<Enrolled[]> {
  const enrolled: Enrolled[] = [];
  for (let done = 0; done < count; done += 50) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(50, count - done) }, () =>
        fleet.t.request("POST", "/api/v1/devices/enroll", { body: enrollBody(fleet.enrollmentToken) }),
      ),
    );
    for (const response of batch) {
      expect(response.status, JSON.stringify(response.body)).toBe(201);
      enrolled.push(response.body as Enrolled);
    }
  }
  return enrolled;
}

/** The organization's device ids in list order, read straight from the table. */
async function listOrder(fleet: Fleet): Promise<string[]> {
  const rows = await fleet.t.deps.db
    .select({ id: devices.id })
    .from(devices)
    .where(eq(devices.organizationId, fleet.organizationId))
    .orderBy(desc(devices.enrolledAt), desc(devices.id));
  return rows.map((row) => row.id);
}

/** Pages past the first anchor, one across an anchor, and the last: each equal to its slice of the list. */
async function expectPagesMatchTheTable(fleet: Fleet) {
  const { t, admin } = fleet;
  const order = await listOrder(fleet);
  for (const [page, pageSize] of [
    [21, 50], // offset 1,000: the first anchor
    [34, 30], // offset 990: across it
    [41, 50],
    [Math.ceil(order.length / 70), 70], // the last, partial page
  ] as const) {
    const listed = await t.request("GET", `/api/v1/devices?page=${page}&page_size=${pageSize}`, admin);
    expect(listed.status).toBe(200);
    expect(listed.body.total).toBe(order.length);
    const ids = listed.body.data.map((device: { id: string }) => device.id);
    expect(ids, `page ${page} of ${pageSize}`).toEqual(order.slice((page - 1) * pageSize, page * pageSize));
  }
  // Every row from the first anchor on, a page of 100 at a time.
  const walked: string[] = [];
  for (let page = ANCHOR_SPACING / 100 + 1; (page - 1) * 100 < order.length; page++) {
    const listed = await t.request("GET", `/api/v1/devices?page=${page}&page_size=100`, admin);
    walked.push(...listed.body.data.map((device: { id: string }) => device.id));
  }
  expect(walked).toEqual(order.slice(ANCHOR_SPACING));
}

/** Wipes and deletes a device, as an administrator does. */
async function remove(fleet: Fleet, device: Enrolled) {
  const { t, admin } = fleet;
  const wipe = await t.request("POST", `/api/v1/devices/${device.id}/wipe`, {
    ...admin,
    body: { reason: "lost" },
  });
  expect(wipe.status).toBe(202);
  const completed = await t.request("POST", `/api/v1/agent/wipes/${wipe.body.wipe_id}/complete`, {
    token: device.device_token,
    body: { success: true },
  });
  expect(completed.status).toBe(200);
  expect((await t.request("DELETE", `/api/v1/devices/${device.id}`, admin)).status).toBe(204);
}

test("deep pages hold the rows OFFSET would, through enrollments, a deletion and a clock that went back", async () => {
  const t = await createTestApp(SETTINGS);
  try {
    const fleet = await newFleet(t);
    const enrolled = await enroll(fleet, 2 * ANCHOR_SPACING + 150);
    await expectPagesMatchTheTable(fleet);

    // New enrollments go to the head of the list and move every deep row down by as many.
    t.clock.advanceSeconds(3600);
    await enroll(fleet, 7);
    await expectPagesMatchTheTable(fleet);

    // A deletion deep in the list and an enrollment at its head: the count is unchanged, the rows between
    // them have moved.
    const gone = enrolled[ANCHOR_SPACING] as Enrolled;
    await remove(fleet, gone);
    await enroll(fleet, 1);
    expect(await listOrder(fleet)).not.toContain(gone.id);
    await expectPagesMatchTheTable(fleet);

    // A device enrolled while the clock reads earlier than the newest devices lands in the middle.
    t.clock.advanceSeconds(-1800);
    const [between] = await enroll(fleet, 1);
    expect((await listOrder(fleet)).indexOf((between as Enrolled).id)).toBe(8);
    await expectPagesMatchTheTable(fleet);

    // A page past the end is empty and still says how many there are.
    const past = await t.request("GET", "/api/v1/devices?page=1000&page_size=100", fleet.admin);
    expect(past.body).toMatchObject({ data: [], total: (await listOrder(fleet)).length });
  } finally {
    await t.close();
  }
}, 60_000);

/** The organization's kept anchors, once kept for its current list (they are written a moment after they are found). */
async function keptAnchors(fleet: Fleet): Promise<{ enrolledAt: string; id: string }[]> {
  const deadline = Date.now() + 10_000;
  for (;;) {
    const [state] = await fleet.t.deps.db
      .select({ version: organizations.deviceListVersion })
      .from(organizations)
      .where(eq(organizations.id, fleet.organizationId));
    const [kept] = await fleet.t.deps.db
      .select()
      .from(deviceListAnchors)
      .where(eq(deviceListAnchors.organizationId, fleet.organizationId));
    if (kept && kept.listVersion === state?.version) return kept.keys;
    if (Date.now() > deadline) throw new Error("the anchors were not kept");
    await Bun.sleep(50);
  }
}

const folder = mkdtempSync(join(tmpdir(), "bulwark-anchors-"));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

test("anchors found after a start are kept: a server started again pages deep from them, and keeps new ones once the list changed", async () => {
  const path = join(folder, "bulwark.db");
  const first = await createTestApp({ ...SETTINGS, database: { path } });
  const fleet = await newFleet(first);
  let enrolled: Enrolled[];
  try {
    enrolled = await enroll(fleet, 2 * ANCHOR_SPACING + 30);
    // What `serve` runs once it listens: every anchor of the largest organizations, found and kept.
    await warmUpUnfilteredDevicePages(first.deps.db);
    const order = await listOrder(fleet);
    expect((await keptAnchors(fleet)).map((key) => key.id)).toEqual(
      [0, 1, 2].map((index) => order[index * ANCHOR_SPACING] as string),
    );
  } finally {
    await first.close();
  }

  const t = await createTestApp({ ...SETTINGS, database: { path } });
  try {
    const again: Fleet = { ...fleet, t, admin: { token: (await t.signIn(fleet.adminEmail)).token } };
    await expectPagesMatchTheTable(again);
    // Enrolled at the head meanwhile: the kept anchors still hold, counted from their first row.
    t.clock.advanceSeconds(3600);
    await enroll(again, 3);
    await expectPagesMatchTheTable(again);

    // A deletion changes the list: the kept anchors no longer count, and the ones found instead are kept.
    await remove(again, enrolled[10] as Enrolled);
    await expectPagesMatchTheTable(again);
    expect((await keptAnchors(again))[1]?.id).toBe((await listOrder(again))[ANCHOR_SPACING]);
  } finally {
    await t.close();
  }
}, 120_000);
