import { afterAll, expect, test } from "bun:test";
import { desc, eq } from "drizzle-orm";
import { ANCHOR_SPACING } from "../../src/db/device-page-anchors";
import { devices } from "../../src/db/tables";
import { createEnrollmentToken, type Enrolled, enrollBody } from "../helpers/devices";
import { createTestApp } from "../helpers/test-app";

// Deep pages of the unfiltered device list are read from anchors kept in memory (device-page-anchors.ts).
// Each page must hold exactly the rows a plain ORDER BY ... OFFSET gives, through enrollments, deletions
// and a clock that went back.

const t = await createTestApp({
  rate_limit: { unauthenticated_per_minute: 100_000, enrollments_per_minute: 100_000 },
  // Over 2,000 devices in one organization: the default /20 subnets (test apps use /22s).
  vpn: { organization_prefix_length: 20 },
});
afterAll(() => t.close());
const org = await t.createOrganization();
const admin = { token: org.adminToken };
const { token: enrollmentToken } = await createEnrollmentToken(t, org.adminToken, { max_uses: null });

async function enroll(count: number): Promise<Enrolled[]> {
  const enrolled: Enrolled[] = [];
  for (let done = 0; done < count; done += 50) {
    const batch = await Promise.all(
      Array.from({ length: Math.min(50, count - done) }, () =>
        t.request("POST", "/api/v1/devices/enroll", { body: enrollBody(enrollmentToken) }),
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
async function listOrder(): Promise<string[]> {
  const rows = await t.deps.db
    .select({ id: devices.id })
    .from(devices)
    .where(eq(devices.organizationId, org.organizationId))
    .orderBy(desc(devices.enrolledAt), desc(devices.id));
  return rows.map((row) => row.id);
}

/** Pages past the first anchor, one across an anchor, and the last: each equal to its slice of the list. */
async function expectPagesMatchTheTable() {
  const order = await listOrder();
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

test("deep pages hold the rows OFFSET would, through enrollments, a deletion and a clock that went back", async () => {
  const enrolled = await enroll(2 * ANCHOR_SPACING + 150);
  await expectPagesMatchTheTable();

  // New enrollments go to the head of the list and move every deep row down by as many.
  t.clock.advanceSeconds(3600);
  await enroll(7);
  await expectPagesMatchTheTable();

  // A deletion deep in the list and an enrollment at its head: the count is unchanged, the rows between
  // them have moved.
  const gone = enrolled[ANCHOR_SPACING] as Enrolled;
  const wipe = await t.request("POST", `/api/v1/devices/${gone.id}/wipe`, {
    ...admin,
    body: { reason: "lost" },
  });
  expect(wipe.status).toBe(202);
  const completed = await t.request("POST", `/api/v1/agent/wipes/${wipe.body.wipe_id}/complete`, {
    token: gone.device_token,
    body: { success: true },
  });
  expect(completed.status).toBe(200);
  expect((await t.request("DELETE", `/api/v1/devices/${gone.id}`, admin)).status).toBe(204);
  await enroll(1);
  expect(await listOrder()).not.toContain(gone.id);
  await expectPagesMatchTheTable();

  // A device enrolled while the clock reads earlier than the newest devices lands in the middle.
  t.clock.advanceSeconds(-1800);
  const [between] = await enroll(1);
  expect((await listOrder()).indexOf((between as Enrolled).id)).toBe(8);
  await expectPagesMatchTheTable();

  // A page past the end is empty and still says how many there are.
  const past = await t.request("GET", "/api/v1/devices?page=1000&page_size=100", admin);
  expect(past.body).toMatchObject({ data: [], total: (await listOrder()).length });
}, 60_000);
