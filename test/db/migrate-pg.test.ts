/**
 * migratePg (src/db/pg/migrate-pg.ts): the embedded PostgreSQL migrations, applied once each, in order,
 * one transaction each, by one process at a time.
 */
import { afterAll, expect, test } from "bun:test";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { SQL } from "bun";
import { DatabaseSchemaError } from "../../src/db/migrate";
import { embeddedPgMigrations } from "../../src/db/migrations-pg.generated";
import { MIGRATION_LOCK_KEY, migratePg } from "../../src/db/pg/migrate-pg";
import { sharedPgCluster } from "../helpers/pg-cluster";

const cluster = await sharedPgCluster();
const pools: SQL[] = [];
/** A connection pool to a new, empty database (closed after the tests). */
async function newDatabase(): Promise<{ url: string; sql: SQL }> {
  const url = await cluster.createDatabase();
  const sql = new SQL(url, { max: 3 });
  pools.push(sql);
  return { url, sql };
}
afterAll(async () => {
  for (const pool of pools) await pool.close();
});

const ALL_TAGS = embeddedPgMigrations.map((migration) => migration.tag);
const recordedTags = async (sql: SQL) =>
  (await sql`SELECT tag FROM bulwark_migrations ORDER BY tag`).map((row: { tag: string }) => row.tag);

test("every PostgreSQL migration drizzle-kit's journal lists is embedded, in journal order", () => {
  const folder = join(import.meta.dir, "../../migrations/pg");
  const journal = JSON.parse(readFileSync(join(folder, "meta/_journal.json"), "utf8")) as {
    entries: { tag: string }[];
  };
  expect(ALL_TAGS).toEqual(journal.entries.map((entry) => entry.tag));
  expect(ALL_TAGS).toEqual([
    "0000_baseline",
    "0001_triggers",
    "0002_device_list_anchors",
    "0003_replica_coordination",
    "0004_job_runs",
    "0005_wipe_report",
    "0006_phone_enrollments",
  ]);
  for (const migration of embeddedPgMigrations)
    expect(migration.sql).toBe(readFileSync(join(folder, `${migration.tag}.sql`), "utf8"));
});

test("migrating twice applies everything once, records it, and applies nothing the second time", async () => {
  const { sql } = await newDatabase();
  expect(await migratePg(sql, { version: "9.9.9" })).toEqual({ applied: ALL_TAGS, total: ALL_TAGS.length });
  const recorded = await sql`SELECT tag, applied_at, bulwark_version FROM bulwark_migrations ORDER BY tag`;
  expect(
    recorded.map((row: { tag: string; bulwark_version: string }) => [row.tag, row.bulwark_version]),
  ).toEqual(ALL_TAGS.map((tag) => [tag, "9.9.9"]));
  const [devices] = await sql`SELECT to_regclass('devices') IS NOT NULL AS exists`;
  expect(devices.exists).toBe(true);

  expect(await migratePg(sql)).toEqual({ applied: [], total: ALL_TAGS.length });
  expect(await recordedTags(sql)).toEqual(ALL_TAGS);
});

test("a migration runner waits while another holds the migration lock, then applies everything", async () => {
  const { url, sql } = await newDatabase();
  const holder = new SQL(url, { max: 1 });
  pools.push(holder);
  await holder.unsafe(`SELECT pg_advisory_lock(${MIGRATION_LOCK_KEY})`);

  const running = migratePg(sql);
  // It is blocked on the advisory lock (and has written nothing) until the holder lets go.
  let isWaiting = false;
  for (let poll = 0; poll < 200 && !isWaiting; poll++) {
    const [row] = await holder`
      SELECT count(*)::int AS waiting FROM pg_stat_activity
      WHERE datname = current_database() AND wait_event_type = 'Lock' AND wait_event = 'advisory'`;
    isWaiting = row.waiting === 1;
    if (!isWaiting) await Bun.sleep(25);
  }
  expect(isWaiting).toBe(true);
  const [before] = await holder`SELECT to_regclass('bulwark_migrations') IS NULL AS missing`;
  expect(before.missing).toBe(true);

  await holder.unsafe(`SELECT pg_advisory_unlock(${MIGRATION_LOCK_KEY})`);
  expect((await running).applied).toEqual(ALL_TAGS);
}, 15_000);

test("two runners started at once on a new database: one applies everything, the other nothing", async () => {
  const { url, sql } = await newDatabase();
  const other = new SQL(url, { max: 3 });
  pools.push(other);
  const results = await Promise.all([migratePg(sql), migratePg(other)]);
  expect(results.map((result) => result.applied.length).sort()).toEqual([0, ALL_TAGS.length]);
  expect(await recordedTags(sql)).toEqual(ALL_TAGS);
  // The lock was given back: a third run takes it and returns.
  expect((await migratePg(other)).applied).toEqual([]);
});

test("a migration that fails leaves nothing of itself behind and is not recorded", async () => {
  const { sql } = await newDatabase();
  const migrations = [
    { tag: "0000_first", sql: "CREATE TABLE first (id integer PRIMARY KEY)" },
    {
      tag: "0001_broken",
      sql: "CREATE TABLE second (id integer PRIMARY KEY);\n--> statement-breakpoint\nSELECT no_such_function()",
    },
  ];
  await expect(migratePg(sql, { migrations })).rejects.toThrow(/no_such_function/);
  expect(await recordedTags(sql)).toEqual(["0000_first"]);
  const [tables] =
    await sql`SELECT to_regclass('first') IS NOT NULL AS first, to_regclass('second') IS NULL AS no_second`;
  expect(tables).toEqual({ first: true, no_second: true });
});

test("a database of another program, or migrated by a newer Bulwark, is refused before anything is written", async () => {
  const foreign = await newDatabase();
  await foreign.sql`CREATE TABLE customers (id integer PRIMARY KEY)`;
  const refusal = migratePg(foreign.sql, { label: "the shop database" });
  await expect(refusal).rejects.toThrow(DatabaseSchemaError);
  await expect(refusal).rejects.toThrow("the shop database holds tables that are not Bulwark's (customers)");
  const [untouched] = await foreign.sql`SELECT to_regclass('bulwark_migrations') IS NULL AS missing`;
  expect(untouched.missing).toBe(true);

  const newer = await newDatabase();
  await migratePg(newer.sql);
  await newer.sql`INSERT INTO bulwark_migrations (tag, applied_at, bulwark_version) VALUES ('0099_future', now(), '7.0.0')`;
  await expect(migratePg(newer.sql, { version: "1.0.0" })).rejects.toThrow(
    /was migrated by a newer Bulwark: .*Bulwark 7\.0\.0.*this is Bulwark 1\.0\.0/,
  );
});
