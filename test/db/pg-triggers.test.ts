/**
 * The PostgreSQL store keeps `device_counts` and `organizations.device_list_version` as SQLite's triggers
 * do (migrations/pg/0001_triggers.sql against migrations/0009 and 0010): the same statements run on both
 * stores leave the same rows after every step. And the values the domain stores (ISO instants, booleans,
 * JSON, text compared and ordered bytewise) come back from PostgreSQL as they come back from SQLite.
 */
import { afterAll, expect, test } from "bun:test";
import { asc, gt, lt } from "drizzle-orm";
import { drizzle } from "drizzle-orm/bun-sql";
import * as sqliteSchema from "../../src/db/schema";
import * as pgSchema from "../../src/db/schema-pg";
import { migratedPgDatabase, migratedSqliteDatabase } from "../helpers/pg-stores";

const sqliteStore = migratedSqliteDatabase();
const pgStore = await migratedPgDatabase();
afterAll(async () => {
  sqliteStore.close();
  await pgStore.sql.close();
});

const CREATED = "2024-05-01T00:00:00.000Z";
const DEVICE_COLUMNS =
  "(id, organization_id, device_name, platform, agent_version, hardware_id, status, last_seen, enrolled_at, vpn_public_key, compliance_status, created_at, updated_at)";

/** One device's VALUES tuple. */
function device(
  id: string,
  organization: string,
  status: string,
  platform: string,
  compliance: string,
  enrolledAt: string,
): string {
  return `('${id}', '${organization}', 'device ${id}', '${platform}', '1.0.0', 'hw-${id}', '${status}', '${CREATED}', '${enrolledAt}', 'key-${id}', '${compliance}', '${CREATED}', '${CREATED}')`;
}

/** An instant on 2024-05-<day>, at `hour`. */
const at = (day: number, hour = 0) =>
  `2024-05-${String(day).padStart(2, "0")}T${String(hour).padStart(2, "0")}:00:00.000Z`;

/** What the triggers keep, as rows read from one store. */
async function keptRows(run: (query: string) => Promise<unknown[]>) {
  return {
    counts: await run(
      "SELECT organization_id, status, platform, compliance_status, count FROM device_counts ORDER BY organization_id, status, platform, compliance_status",
    ),
    versions: await run("SELECT id, device_list_version FROM organizations ORDER BY id"),
  };
}
const sqliteRows = (query: string) => Promise.resolve(sqliteStore.sqlite.query(query).all());
const pgRows = async (query: string) => [...(await pgStore.sql.unsafe(query))];

/** Each step: what it does, and the statement run as it stands on both stores. */
const STEPS: [string, string][] = [
  [
    "two organizations",
    `INSERT INTO organizations (id, name, created_at, updated_at) VALUES ('org-a', 'A', '${CREATED}', '${CREATED}'), ('org-b', 'B', '${CREATED}', '${CREATED}')`,
  ],
  [
    "a device at the head of its list",
    `INSERT INTO devices ${DEVICE_COLUMNS} VALUES ${device("a-1", "org-a", "online", "linux", "compliant", at(10))}`,
  ],
  [
    "a device enrolled before the newest (not at the head)",
    `INSERT INTO devices ${DEVICE_COLUMNS} VALUES ${device("a-2", "org-a", "pending", "windows", "unknown", at(5))}`,
  ],
  [
    "two devices in one statement, oldest first: each at the head when it is inserted",
    `INSERT INTO devices ${DEVICE_COLUMNS} VALUES ${device("b-1", "org-b", "online", "macos", "compliant", at(1))}, ${device("b-2", "org-b", "online", "macos", "compliant", at(2))}`,
  ],
  [
    "two devices in one statement, newest first: the second is not at the head",
    `INSERT INTO devices ${DEVICE_COLUMNS} VALUES ${device("b-4", "org-b", "offline", "ios", "non_compliant", at(4))}, ${device("b-3", "org-b", "offline", "ios", "non_compliant", at(3))}`,
  ],
  [
    // Bytewise, "B" sorts before "a"; a linguistic collation would put it after, and see no later row.
    "the same instant, ids that only a bytewise order puts 'B' before 'a'",
    `INSERT INTO devices ${DEVICE_COLUMNS} VALUES ${device("a-a", "org-a", "online", "android", "compliant", at(20))}, ${device("a-B", "org-a", "online", "android", "compliant", at(20))}`,
  ],
  ["a status change", "UPDATE devices SET status = 'suspended' WHERE id = 'a-1'"],
  ["a status set to the value it holds", "UPDATE devices SET status = 'offline' WHERE id = 'b-4'"],
  [
    "compliance and platform of several devices",
    "UPDATE devices SET compliance_status = 'non_compliant', platform = 'linux' WHERE organization_id = 'org-b' AND status = 'online'",
  ],
  ["only a column no trigger watches", `UPDATE devices SET last_seen = '${at(30)}'`],
  ["an enrollment time changed", `UPDATE devices SET enrolled_at = '${at(1)}' WHERE id = 'a-1'`],
  [
    "a device moved to the other organization",
    "UPDATE devices SET organization_id = 'org-b' WHERE id = 'a-2'",
  ],
  ["an id changed", "UPDATE devices SET id = 'a-z' WHERE id = 'a-a'"],
  ["one device deleted", "DELETE FROM devices WHERE id = 'a-B'"],
  [
    "an organization's devices deleted in one statement",
    "DELETE FROM devices WHERE organization_id = 'org-b'",
  ],
];

test("device_counts and device_list_version on PostgreSQL match SQLite's after every statement", async () => {
  for (const [step, statement] of STEPS) {
    sqliteStore.sqlite.exec(statement);
    await pgStore.sql.unsafe(statement);
    const [sqlite, pg] = [await keptRows(sqliteRows), await keptRows(pgRows)];
    expect({ step, ...pg }).toEqual({ step, ...sqlite });
  }
  // The steps did move the kept values: versions were bumped, and counts went up and back to 0.
  const { counts, versions } = await keptRows(pgRows);
  // org-a: a-2 not at the head, a-B before a-a, a-1's enrolled_at, a-2 leaving, a-a's id, a-B deleted.
  // org-b: b-3 not at the head, a-2 arriving, five devices deleted.
  expect(versions).toEqual([
    { id: "org-a", device_list_version: 6 },
    { id: "org-b", device_list_version: 7 },
  ]);
  expect(counts.length).toBeGreaterThan(5);
  expect(counts.filter((row) => (row as { count: number }).count !== 0)).toEqual([
    {
      organization_id: "org-a",
      status: "online",
      platform: "android",
      compliance_status: "compliant",
      count: 1,
    },
    {
      organization_id: "org-a",
      status: "suspended",
      platform: "linux",
      compliance_status: "compliant",
      count: 1,
    },
  ]);
});

test("instants, booleans, JSON and text come back from PostgreSQL as from SQLite", async () => {
  const pg = drizzle({ client: pgStore.sql, schema: pgSchema });
  const sqlite = sqliteStore.db;
  const names = ["a", "B", "b", "_x", "A", "é", "Z", "a b", "ab", "Ab", "0"];
  const rows = names.map((name, index) => ({
    id: `round-${String(index).padStart(2, "0")}`,
    name,
    requireMfa: index % 2 === 0,
    ssoSettings: { provider: "oidc", nested: { list: [1, "two", null, true], name }, é: 2.5 },
    createdAt: `2024-01-02T03:04:05.${String(100 + index)}Z`,
    updatedAt: "2024-12-31T23:59:59.999Z",
  }));
  await pg.insert(pgSchema.organizations).values(rows);
  await sqlite.insert(sqliteSchema.organizations).values(rows);

  const read = {
    pg: await pg.select().from(pgSchema.organizations).where(gt(pgSchema.organizations.id, "round")),
    sqlite: await sqlite
      .select()
      .from(sqliteSchema.organizations)
      .where(gt(sqliteSchema.organizations.id, "round")),
  };
  const byId = <T extends { id: string }>(list: T[]) => [...list].sort((a, b) => (a.id < b.id ? -1 : 1));
  expect(byId(read.pg)).toEqual(byId(read.sqlite));
  // Written and read back unchanged (JSON compared as values: jsonb keeps no key order).
  expect(
    byId(read.pg).map(({ id, name, requireMfa, ssoSettings, createdAt, updatedAt }) => ({
      id,
      name,
      requireMfa,
      ssoSettings,
      createdAt,
      updatedAt,
    })),
  ).toEqual(rows);

  // Instants compare as times in SQL, as the ISO strings compare on SQLite.
  const before = "2024-01-02T03:04:05.103Z";
  const earlier = {
    pg: await pg
      .select({ id: pgSchema.organizations.id })
      .from(pgSchema.organizations)
      .where(lt(pgSchema.organizations.createdAt, before))
      .orderBy(asc(pgSchema.organizations.createdAt)),
    sqlite: await sqlite
      .select({ id: sqliteSchema.organizations.id })
      .from(sqliteSchema.organizations)
      .where(lt(sqliteSchema.organizations.createdAt, before))
      .orderBy(asc(sqliteSchema.organizations.createdAt)),
  };
  expect(earlier.pg).toEqual([{ id: "round-00" }, { id: "round-01" }, { id: "round-02" }]);
  expect(earlier.pg).toEqual(earlier.sqlite);

  // Text: ordered byte by byte and compared case-sensitively, on a database whose own collation is
  // linguistic (it would order "a" < "A" < "b" < "B" and put "_x" among the x's).
  const sameOnBoth = async (query: string) => {
    const rows = await pgRows(query);
    expect({ query, rows }).toEqual({ query, rows: await sqliteRows(query) });
    return rows as Record<string, string>[];
  };
  const bytewise = [...names].sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)));
  const ordered = await sameOnBoth("SELECT name FROM organizations WHERE id > 'round' ORDER BY name");
  expect(ordered.map((row) => row.name)).toEqual(bytewise);
  expect(await sameOnBoth("SELECT id FROM organizations WHERE name = 'a'")).toEqual([{ id: "round-00" }]);
  const pastUpperCase = await sameOnBoth("SELECT name FROM organizations WHERE name > 'Z' ORDER BY name");
  expect(pastUpperCase.map((row) => row.name)).toEqual(bytewise.filter((name) => name > "Z"));
});

test("an instant in PostgreSQL's own text form reads as the ISO string written", async () => {
  const written = "2024-02-29T23:59:59.007Z";
  const [row] = await pgStore.sql`SELECT ${written}::timestamptz(3)::text AS text`;
  expect(row.text).toBe("2024-02-29 23:59:59.007+00");
  expect(pgSchema.organizations.createdAt.mapFromDriverValue(row.text)).toBe(written);
  // And at another session time zone, which changes the text but not the instant.
  const [local] = await pgStore.sql.begin(async (tx) => {
    await tx`SET LOCAL TIME ZONE 'Asia/Kolkata'`;
    return tx`SELECT ${written}::timestamptz(3)::text AS text`;
  });
  expect(local.text).toBe("2024-03-01 05:29:59.007+05:30");
  expect(pgSchema.organizations.createdAt.mapFromDriverValue(local.text)).toBe(written);
});

test("a LIKE prefix on a text column is answered from its btree index (the column is ordered bytewise)", async () => {
  const plan = await pgStore.sql.begin(async (tx) => {
    await tx`SET LOCAL enable_seqscan = off`;
    return tx.unsafe("EXPLAIN (COSTS OFF) SELECT id FROM users WHERE email LIKE 'abc%'");
  });
  const text = plan.map((row: Record<string, string>) => Object.values(row).join("")).join("\n");
  expect(text).toContain("users_email_unique");
  expect(text).toContain("Index Cond: ((email >= 'abc'::text) AND (email < 'abd'::text))");
});
