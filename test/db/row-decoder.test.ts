import { afterAll, describe, expect, test } from "bun:test";
import { eq, sql } from "drizzle-orm";
import { devices, deviceTokens, organizations, users } from "../../src/db/schema";
import { withRowDecoder } from "../../src/db/sqlite/prepared";
import { checkIn, createDeviceTestApp, enrollDevice, HEALTHY_FACTS } from "../helpers/devices";

const t = await createDeviceTestApp();
afterAll(() => t.close());
const org = await t.createOrganization();
const device = await enrollDevice(t, org.adminToken, { os_version: "14.4" });
// A check-in fills the JSON, boolean and time columns; a second device keeps them null.
const checkedIn = await checkIn(t, device.device_token, { agent_version: "2.0.0", facts: HEALTHY_FACTS });
const untouched = await enrollDevice(t, org.adminToken);
const db = t.deps.db;

/** Each query gives the same rows through withRowDecoder as through Drizzle's own mapper. */
function expectSameRows(
  query: {
    get(values?: Record<string, unknown>): unknown;
    all(values?: Record<string, unknown>): unknown;
    values(values?: Record<string, unknown>): unknown[][];
  },
  values: Record<string, unknown>,
) {
  const decoded = withRowDecoder(query);
  expect(decoded).not.toBe(query);
  const row = query.get(values);
  expect(row).toBeDefined();
  expect(decoded.get(values)).toStrictEqual(row);
  expect(decoded.all(values)).toStrictEqual(query.all(values));
}

describe("withRowDecoder decodes rows as Drizzle does", () => {
  test("a whole row: text, integers, booleans, JSON, and nulls", () => {
    expect(checkedIn.status).toBe(200);
    const query = db
      .select()
      .from(devices)
      .where(eq(devices.id, sql.placeholder("id")))
      .prepare();
    expectSameRows(query, { id: device.id });
    expectSameRows(query, { id: untouched.id });
    const row = withRowDecoder(query).get({ id: device.id }) as typeof devices.$inferSelect;
    expect(row.agentVersion).toBe("2.0.0");
    expect(row.facts).toMatchObject({ disk_encrypted: true });
    expect(typeof row.complianceStale).toBe("boolean");
  });

  test("nested objects from a join, and SQL fields decoded with mapWith", () => {
    const joined = db
      .select({
        token: deviceTokens,
        device: { id: devices.id, status: devices.status },
        plan: sql`(SELECT organizations.plan FROM organizations WHERE organizations.id = devices.organization_id)`.mapWith(
          organizations.plan,
        ),
        enrolledAt: sql<number>`unixepoch(devices.enrolled_at)`.mapWith(Number),
      })
      .from(deviceTokens)
      .innerJoin(devices, eq(devices.id, deviceTokens.deviceId))
      .where(eq(deviceTokens.deviceId, sql.placeholder("deviceId")))
      .prepare();
    expectSameRows(joined, { deviceId: device.id });
    const users_ = db
      .select({ user: users, n: sql`1`.mapWith(Boolean) })
      .from(users)
      .prepare();
    expectSameRows(users_, {});
    // An aliased SQL field decodes through its SQL's decoder.
    const aliased = db
      .select({
        id: devices.id,
        enrolled: sql<number>`unixepoch(enrolled_at)`.mapWith(String).as("enrolled"),
      })
      .from(devices)
      .where(eq(devices.id, sql.placeholder("id")))
      .prepare();
    expectSameRows(aliased, { id: device.id });
    expect(typeof withRowDecoder(aliased).get({ id: device.id })?.enrolled).toBe("string");
  });

  test("a nested object of a subquery's columns, all null, as Drizzle decodes it", () => {
    const owners = db.select({ id: devices.id, userId: devices.userId }).from(devices).as("owners");
    const query = db
      .select({ holder: { userId: owners.userId } })
      .from(owners)
      .where(eq(owners.id, sql.placeholder("id")))
      .prepare();
    expectSameRows(query, { id: untouched.id });
  });

  test("no row is undefined, and no rows an empty list", () => {
    const query = withRowDecoder(
      db
        .select()
        .from(devices)
        .where(eq(devices.id, sql.placeholder("id")))
        .prepare(),
    );
    expect(query.get({ id: "00000000-0000-7000-8000-000000000000" })).toBeUndefined();
    expect(query.all({ id: "00000000-0000-7000-8000-000000000000" })).toEqual([]);
  });

  test("a left join keeps Drizzle's mapper, which turns an all-null side into null", () => {
    const query = db
      .select({ device: devices, token: deviceTokens })
      .from(devices)
      .leftJoin(deviceTokens, sql`0`)
      .where(eq(devices.id, sql.placeholder("id")))
      .prepare();
    expect(withRowDecoder(query)).toBe(query);
    expect(query.get({ id: device.id })?.token).toBeNull();
  });
});
