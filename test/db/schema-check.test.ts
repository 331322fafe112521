import { Database } from "bun:sqlite";
import { expect, test } from "bun:test";
import { CREATE_UNVERSIONED_MIGRATIONS_TABLE, migrateDatabase, statementsOf } from "../../src/db/migrate";
import { embeddedMigrations } from "../../src/db/migrations.generated";
import { hasExpectedSchemaDigest, schemaProblems } from "../../src/db/schema-check";
import { normaliseSql } from "../../src/db/schema-objects";

test("a database migrated one migration at a time has, at each level, the schema its build-time digest records", () => {
  const database = new Database(":memory:");
  for (let level = 1; level <= embeddedMigrations.length; level++) {
    const migrations = embeddedMigrations.slice(0, level);
    migrateDatabase(database, { migrations });
    const tags = migrations.map((migration) => migration.tag);
    expect({ level, matches: hasExpectedSchemaDigest(database, tags) }).toEqual({ level, matches: true });
    expect(schemaProblems(database, tags)).toEqual([]);
  }
  database.exec("CREATE TRIGGER make_admin AFTER INSERT ON sessions BEGIN SELECT 1; END");
  const tags = embeddedMigrations.map((migration) => migration.tag);
  expect(hasExpectedSchemaDigest(database, tags)).toBe(false);
  expect(schemaProblems(database, tags)).toEqual(['trigger "make_admin" is not part of Bulwark\'s schema']);
  database.close();
});

test("a database from before bulwark_migrations recorded versions is Bulwark's schema, before and after migrating", () => {
  const database = new Database(":memory:");
  database.exec(CREATE_UNVERSIONED_MIGRATIONS_TABLE);
  const older = embeddedMigrations.slice(0, 3);
  for (const migration of older) {
    for (const statement of statementsOf(migration)) database.exec(statement);
    database
      .query("INSERT INTO bulwark_migrations (tag, applied_at) VALUES (?, '2026-11-01')")
      .run(migration.tag);
  }
  expect(
    schemaProblems(
      database,
      older.map((migration) => migration.tag),
    ),
  ).toEqual([]);
  migrateDatabase(database);
  const tags = embeddedMigrations.map((migration) => migration.tag);
  expect(hasExpectedSchemaDigest(database, tags)).toBe(true);
  database.close();
});

test("definitions are compared as SQLite reads them: the quote characters, whitespace and comments are not a change", () => {
  const reference = 'CREATE INDEX `a_b_idx` ON `a` (`b`,"c")';
  expect(normaliseSql('CREATE INDEX "a_b_idx"  ON [a]\n\t( "b" , `c` ) -- why\n')).toBe(
    normaliseSql(reference),
  );
  expect(normaliseSql("CREATE INDEX `a_b_idx` /* note */ ON `a` (`b`,`c`)")).toBe(normaliseSql(reference));
  // A name's spelling, a bare word for a quoted one (a keyword, or a string where no column matches),
  // a string literal's letters, and quote characters inside a string all count.
  expect(normaliseSql("CREATE INDEX `a_b_idx` ON `a` (`B`,`c`)")).not.toBe(normaliseSql(reference));
  expect(normaliseSql("CREATE TABLE t (x DEFAULT current_time)")).not.toBe(
    normaliseSql('CREATE TABLE t (x DEFAULT "current_time")'),
  );
  expect(normaliseSql("CREATE TABLE t (x DEFAULT 'Member')")).not.toBe(
    normaliseSql("CREATE TABLE t (x DEFAULT 'member')"),
  );
  expect(normaliseSql("CREATE TABLE t (x DEFAULT '`y`  z')")).not.toBe(
    normaliseSql("CREATE TABLE t (x DEFAULT '\"y\" z')"),
  );
});

test("a table that SQLite's RENAME rewrote compares equal to one written with the new name", () => {
  // drizzle-kit rebuilds a table as `__new_<name>` and renames it; SQLite then stores "name" quoted its way.
  const rebuilt = new Database(":memory:");
  rebuilt.exec("CREATE TABLE `__new_devices` (`id` text PRIMARY KEY NOT NULL)");
  rebuilt.exec("ALTER TABLE `__new_devices` RENAME TO `devices`");
  const stored = (
    rebuilt.query("SELECT sql FROM sqlite_master WHERE name = 'devices'").get() as { sql: string }
  ).sql;
  expect(stored).not.toBe("CREATE TABLE `devices` (`id` text PRIMARY KEY NOT NULL)");
  expect(normaliseSql(stored)).toBe(normaliseSql("CREATE TABLE `devices` (`id` text PRIMARY KEY NOT NULL)"));
  rebuilt.close();
});
