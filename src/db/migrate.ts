import type { Database } from "bun:sqlite";
import { VERSION } from "../version";
import { DATA_MIGRATIONS } from "./data-migrations";
import { embeddedMigrations } from "./migrations.generated";

export interface MigrationResult {
  applied: string[];
  total: number;
}

/** The database is not one this executable can use; the message says why in one line (one per cause). */
export class DatabaseSchemaError extends Error {}

/** The schema version a migration tag stands for: its number (`0005_gdpr_anonymous_label` is 5). */
export function schemaVersionOf(tag: string): number {
  return Number.parseInt(tag, 10) || 0;
}

/** `bulwark_migrations` as migrateDatabase creates it. */
export const CREATE_MIGRATIONS_TABLE =
  "CREATE TABLE IF NOT EXISTS bulwark_migrations (tag TEXT PRIMARY KEY, applied_at TEXT NOT NULL, bulwark_version TEXT)";
/**
 * `bulwark_migrations` as Bulwark created it before it recorded which version applied each migration;
 * migrateDatabase adds the column, and SQLite then keeps the same definition as CREATE_MIGRATIONS_TABLE's.
 */
export const CREATE_UNVERSIONED_MIGRATIONS_TABLE =
  "CREATE TABLE IF NOT EXISTS bulwark_migrations (tag TEXT PRIMARY KEY, applied_at TEXT NOT NULL)";

/** Whether `bulwark_migrations` records versions (databases migrated before it did have no such column). */
export function hasVersionColumn(sqlite: Database): boolean {
  return sqlite
    .query<{ name: string }, []>("SELECT name FROM pragma_table_info('bulwark_migrations')")
    .all()
    .some((column) => column.name === "bulwark_version");
}

/** What a database's `bulwark_migrations` says about it. */
export interface DatabaseSchema {
  /** The highest migration recorded, or null for a database no Bulwark has migrated yet. */
  latestTag: string | null;
  /** Every migration recorded, in order. */
  appliedTags: string[];
  /** Recorded migrations this executable does not know: the database is newer. */
  unknownTags: string[];
  /** The Bulwark version that applied the latest migration, when it recorded one. */
  migratedBy: string | null;
}

/**
 * Reads the schema of a Bulwark database; a database holding other tables and no `bulwark_migrations`
 * is refused (DatabaseSchemaError), an empty one reads as not migrated yet.
 */
export function readDatabaseSchema(
  sqlite: Database,
  label: string,
  known: readonly { tag: string }[] = embeddedMigrations,
): DatabaseSchema {
  const tables = sqlite
    .query<{ name: string }, []>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
    )
    .all()
    .map((row) => row.name);
  if (tables.length === 0) return { latestTag: null, appliedTags: [], unknownTags: [], migratedBy: null };
  if (!tables.includes("bulwark_migrations")) {
    throw new DatabaseSchemaError(
      `${label} holds tables that are not Bulwark's (${tables.slice(0, 3).join(", ")}${tables.length > 3 ? ", ..." : ""}); point database.path at a new file`,
    );
  }
  const recorded = sqlite
    .query<{ tag: string; version: string | null }, []>(
      `SELECT tag, ${hasVersionColumn(sqlite) ? "bulwark_version" : "NULL"} AS version FROM bulwark_migrations ORDER BY tag`,
    )
    .all();
  return schemaFromRecords(recorded, known);
}

/** The schema `bulwark_migrations`' rows (in tag order) describe, against the migrations this executable knows. */
export function schemaFromRecords(
  recorded: readonly { tag: string; version: string | null }[],
  known: readonly { tag: string }[],
): DatabaseSchema {
  const knownTags = new Set(known.map((migration) => migration.tag));
  const latest = recorded.at(-1);
  return {
    latestTag: latest?.tag ?? null,
    appliedTags: recorded.map((row) => row.tag),
    unknownTags: recorded.filter((row) => !knownTags.has(row.tag)).map((row) => row.tag),
    migratedBy: latest?.version ?? null,
  };
}

/**
 * Refuses a database this executable must not touch: one holding tables of something else, and one
 * migrated by a newer Bulwark (a recorded migration this one does not know), whose schema this code
 * would misread or damage. The message names both versions.
 */
export function assertUsableSchema(
  schema: DatabaseSchema,
  label: string,
  version: string,
  known: readonly { tag: string }[] = embeddedMigrations,
): void {
  if (schema.unknownTags.length === 0) return;
  const ours = known.at(-1)?.tag ?? "";
  const theirs = schema.latestTag ?? "";
  const by = schema.migratedBy ? `Bulwark ${schema.migratedBy}` : "a newer Bulwark";
  throw new DatabaseSchemaError(
    `${label} was migrated by a newer Bulwark: it has schema version ${schemaVersionOf(theirs)} (migration ${schema.unknownTags[0]}, by ${by}), this is Bulwark ${version} with schema version ${schemaVersionOf(ours)}; run ${schema.migratedBy ? `Bulwark ${schema.migratedBy} or later` : "that newer version"}, or restore a backup made before the upgrade`,
  );
}

/** A migration's SQL statements, as drizzle-kit separates them. */
export function statementsOf(migration: { sql: string }): string[] {
  return (
    migration.sql
      .split("--> statement-breakpoint")
      .map((statement) => statement.trim())
      // A migration of comments only (its work done by a data step) has no statement to run.
      .filter((statement) => statement.replace(/^--.*$/gm, "").trim() !== "")
  );
}

/**
 * Applies every embedded migration not yet recorded in `bulwark_migrations`, each in its own
 * transaction. Migrations are append-only: a recorded tag is never run again. A database of another
 * program or of a newer Bulwark is refused (DatabaseSchemaError) before anything is written.
 */
export function migrateDatabase(
  sqlite: Database,
  options: { migrations?: readonly { tag: string; sql: string }[]; label?: string; version?: string } = {},
): MigrationResult {
  const { migrations = embeddedMigrations, label = "the database", version = VERSION } = options;
  assertUsableSchema(readDatabaseSchema(sqlite, label, migrations), label, version, migrations);
  sqlite.exec(CREATE_MIGRATIONS_TABLE);
  // Databases migrated before Bulwark recorded its version get the column (NULL for their migrations).
  if (!hasVersionColumn(sqlite))
    sqlite.exec("ALTER TABLE bulwark_migrations ADD COLUMN bulwark_version TEXT");
  const isApplied = sqlite.query<{ tag: string }, [string]>(
    "SELECT tag FROM bulwark_migrations WHERE tag = ?",
  );
  const applied: string[] = [];
  for (const migration of migrations) {
    const statements = statementsOf(migration);
    // IMMEDIATE takes the write lock before the check, so two processes migrating the same new
    // database at once apply each migration exactly once.
    const didApply = sqlite
      .transaction(() => {
        if (isApplied.get(migration.tag)) return false;
        for (const statement of statements) sqlite.exec(statement);
        DATA_MIGRATIONS[migration.tag]?.(sqlite);
        sqlite
          .query("INSERT INTO bulwark_migrations (tag, applied_at, bulwark_version) VALUES (?, ?, ?)")
          .run(migration.tag, new Date().toISOString(), version);
        return true;
      })
      .immediate();
    if (didApply) applied.push(migration.tag);
  }
  return { applied, total: migrations.length };
}
