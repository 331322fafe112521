import { expect, test } from "bun:test";
import { existsSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getTableConfig, type SQLiteTable } from "drizzle-orm/sqlite-core";
import { openDatabase } from "../../src/db/client";
import { migrateDatabase } from "../../src/db/migrate";
import { embeddedMigrations } from "../../src/db/migrations.generated";
import * as schema from "../../src/db/schema";
import { findPolicyTemplate } from "../../src/domain/policies/policy-templates";

const tables: SQLiteTable[] = Object.values(schema as Record<string, unknown>).filter(
  (value): value is SQLiteTable => {
    try {
      return getTableConfig(value as SQLiteTable).name !== undefined;
    } catch {
      return false;
    }
  },
);

test("an empty database migrates to exactly the tables, columns and indexes of the Drizzle schema", () => {
  const database = openDatabase({ path: ":memory:", synchronous: "full" });
  const result = migrateDatabase(database.sqlite);
  expect(result.applied.length).toBe(embeddedMigrations.length);

  const actualTables = database.sqlite
    .query<{ name: string }, []>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name != 'bulwark_migrations'",
    )
    .all()
    .map((row) => row.name)
    .sort();
  expect(actualTables).toEqual(tables.map((table) => getTableConfig(table).name).sort());

  for (const table of tables) {
    const config = getTableConfig(table);
    const columns = database.sqlite
      .query<{ name: string; notnull: number }, []>(`PRAGMA table_info(${config.name})`)
      .all()
      .map((column) => `${column.name}${column.notnull ? " not null" : ""}`)
      .sort();
    const expected = config.columns
      .map((column) => `${column.name}${column.notNull ? " not null" : ""}`)
      .sort();
    expect({ table: config.name, columns }).toEqual({ table: config.name, columns: expected });
    const indexes = database.sqlite
      .query<{ name: string }, []>(
        `SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = '${config.name}' AND name NOT LIKE 'sqlite_autoindex%'`,
      )
      .all()
      .map((row) => row.name)
      .sort();
    expect({ table: config.name, indexes }).toEqual({
      table: config.name,
      indexes: config.indexes.map((index) => index.config.name).sort(),
    });
  }
  database.close();
});

test("migrating twice applies nothing the second time", () => {
  const database = openDatabase({ path: ":memory:", synchronous: "full" });
  migrateDatabase(database.sqlite);
  expect(migrateDatabase(database.sqlite).applied).toEqual([]);
  database.close();
});

test("every migration drizzle-kit generated is embedded, in journal order", () => {
  const journal = JSON.parse(
    readFileSync(join(import.meta.dir, "../../migrations/meta/_journal.json"), "utf8"),
  ) as {
    entries: { tag: string }[];
  };
  expect(embeddedMigrations.map((migration) => migration.tag)).toEqual(
    journal.entries.map((entry) => entry.tag),
  );
  for (const migration of embeddedMigrations) {
    expect(migration.sql).toBe(
      readFileSync(join(import.meta.dir, `../../migrations/${migration.tag}.sql`), "utf8"),
    );
  }
});

test("a file database runs in WAL mode with foreign keys on and the configured synchronous level", () => {
  const path = join(tmpdir(), `bulwark-${crypto.randomUUID()}.db`);
  const database = openDatabase({ path, synchronous: "normal" });
  expect(database.sqlite.query<{ journal_mode: string }, []>("PRAGMA journal_mode").get()?.journal_mode).toBe(
    "wal",
  );
  expect(database.sqlite.query<{ synchronous: number }, []>("PRAGMA synchronous").get()?.synchronous).toBe(1);
  expect(database.sqlite.query<{ foreign_keys: number }, []>("PRAGMA foreign_keys").get()?.foreign_keys).toBe(
    1,
  );
  database.close();
});

test("closing a database that ran queries releases it: the WAL is checkpointed and removed", async () => {
  const path = join(tmpdir(), `bulwark-${crypto.randomUUID()}.db`);
  const database = openDatabase({ path, synchronous: "full" });
  migrateDatabase(database.sqlite);
  await database.db.select().from(schema.users);
  await database.db.select().from(schema.organizations);
  database.close();
  expect(existsSync(`${path}-wal`)).toBe(false);
});

test("0012 makes policy names unique ignoring case: names an older database holds twice get their id's start appended", () => {
  const database = openDatabase({ path: ":memory:", synchronous: "full" });
  const before = embeddedMigrations.findIndex((migration) => migration.tag === "0012_policy_name_key");
  migrateDatabase(database.sqlite, { migrations: embeddedMigrations.slice(0, before) });
  const now = "2026-11-01T12:00:00.000Z";
  database.sqlite.exec(
    `INSERT INTO organizations (id, name, created_at, updated_at) VALUES ('org-a', 'A', '${now}', '${now}'), ('org-b', 'B', '${now}', '${now}')`,
  );
  const policies: [string, string, string, string][] = [
    ["p1", "org-a", "Finance laptops", "2026-11-01T12:00:00.000Z"],
    ["p2", "org-a", "finance LAPTOPS", "2026-11-01T12:00:01.000Z"],
    ["p3", "org-b", "finance laptops", "2026-11-01T12:00:02.000Z"],
    ["p4", "org-a", "Ärzte", "2026-11-01T12:00:03.000Z"],
    ["p5", "org-a", "ärzte", "2026-11-01T12:00:04.000Z"],
    ["p6", "org-a", "Finance\u00a0 laptops", "2026-11-01T12:00:05.000Z"],
  ];
  for (const [id, organization, name, createdAt] of policies) {
    database.sqlite
      .query(
        "INSERT INTO policies (id, organization_id, name, current_version, created_at, updated_at) VALUES (?, ?, ?, 1, ?, ?)",
      )
      .run(id, organization, name, createdAt, createdAt);
    database.sqlite
      .query(
        "INSERT INTO policy_versions (policy_id, version, name, description, policy_data, changes, changed_by, changed_at) VALUES (?, 1, ?, '', '{}', '[]', 'system', ?)",
      )
      .run(id, name, createdAt);
  }
  migrateDatabase(database.sqlite);
  const names = database.sqlite
    .query<{ id: string; name: string; version_name: string }, []>(
      "SELECT id, name, (SELECT name FROM policy_versions WHERE policy_id = id) AS version_name FROM policies ORDER BY id",
    )
    .all();
  expect(names).toEqual([
    { id: "p1", name: "Finance laptops", version_name: "Finance laptops" },
    { id: "p2", name: "finance LAPTOPS (p2)", version_name: "finance LAPTOPS (p2)" },
    // Another organization's policy keeps its name.
    { id: "p3", name: "finance laptops", version_name: "finance laptops" },
    { id: "p4", name: "Ärzte", version_name: "Ärzte" },
    { id: "p5", name: "ärzte (p5)", version_name: "ärzte (p5)" },
    // Spacing a person cannot see is no other name either.
    { id: "p6", name: "Finance\u00a0 laptops (p6)", version_name: "Finance\u00a0 laptops (p6)" },
  ]);
  // From now on the index refuses what the code would refuse.
  expect(() =>
    database.sqlite.exec(
      `INSERT INTO policies (id, organization_id, name, name_key, current_version, created_at, updated_at) VALUES ('p7', 'org-a', 'FINANCE LAPTOPS', 'finance laptops', 1, '${now}', '${now}')`,
    ),
  ).toThrow(/UNIQUE/);
  database.close();
});

test("0013 gives a policy whose current version holds the old lookahead pattern a new version with its RE2 form", () => {
  const database = openDatabase({ path: ":memory:", synchronous: "full" });
  const before = embeddedMigrations.findIndex(
    (migration) => migration.tag === "0013_re2_sensitive_data_patterns",
  );
  migrateDatabase(database.sqlite, { migrations: embeddedMigrations.slice(0, before) });
  const lookahead = String.raw`\b(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}\b`;
  const card = String.raw`\b(?:\d[ -]?){12,18}\d\b`;
  const now = "2026-11-01T12:00:00.000Z";
  const insert = (id: string) => {
    database.sqlite
      .query(
        "INSERT INTO policies (id, organization_id, name, name_key, current_version, created_at, updated_at) VALUES (?, 'org', ?, ?, 1, ?, ?)",
      )
      .run(id, id, id, now, now);
    database.sqlite
      .query(
        "INSERT INTO policy_versions (policy_id, version, name, description, policy_data, changes, changed_by, changed_at) VALUES (?, 1, ?, '', ?, '[\"created\"]', 'system', ?)",
      )
      .run(
        id,
        id,
        JSON.stringify({ dlp: { sensitive_data_patterns: [card, lookahead] }, usb: { allowed: true } }),
        now,
      );
  };
  insert("balanced-default");
  database.sqlite.exec(
    `INSERT INTO policies (id, organization_id, name, name_key, current_version, created_at, updated_at) VALUES ('custom', 'org', 'custom', 'custom', 1, '${now}', '${now}');
     INSERT INTO policy_versions (policy_id, version, name, description, policy_data, changes, changed_by, changed_at) VALUES ('custom', 1, 'custom', '', '{"dlp":{"sensitive_data_patterns":["secret"]}}', '["created"]', 'system', '${now}');`,
  );
  migrateDatabase(database.sqlite);
  const versions = database.sqlite
    .query<{ policy_id: string; version: number; policy_data: string; changes: string }, []>(
      "SELECT policy_id, version, policy_data, changes FROM policy_versions ORDER BY policy_id, version",
    )
    .all();
  const ssn = findPolicyTemplate("balanced")?.policy_data.dlp.sensitive_data_patterns[1];
  expect(ssn).not.toBe(lookahead);
  expect(versions.map((row) => [row.policy_id, row.version])).toEqual([
    ["balanced-default", 1],
    ["balanced-default", 2],
    ["custom", 1],
  ]);
  expect(JSON.parse(versions[0]?.policy_data ?? "").dlp.sensitive_data_patterns).toEqual([card, lookahead]);
  expect(JSON.parse(versions[1]?.policy_data ?? "")).toEqual({
    dlp: { sensitive_data_patterns: [card, ssn] },
    usb: { allowed: true },
  });
  expect(JSON.parse(versions[1]?.changes ?? "")[0]).toContain("without lookahead");
  const policy = database.sqlite
    .query<{ current_version: number }, []>(
      "SELECT current_version FROM policies WHERE id = 'balanced-default'",
    )
    .get();
  expect(policy?.current_version).toBe(2);
  database.close();
});
