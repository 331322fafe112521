import type { Database } from "bun:sqlite";
import { embeddedMigrations } from "./migrations.generated";

export interface MigrationResult {
  applied: string[];
  total: number;
}

/** The database is not one this executable can use; the message says why in one line. */
export class DatabaseSchemaError extends Error {}

/**
 * Refuses a database this executable must not touch: one holding tables of something else (no
 * `bulwark_migrations`), and one migrated by a newer Bulwark (a recorded migration this one does not
 * know), whose schema this code would misread or damage.
 */
function assertOwnSchema(sqlite: Database, label: string, known: readonly { tag: string }[]): void {
  const tables = sqlite
    .query<{ name: string }, []>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
    )
    .all()
    .map((row) => row.name);
  if (tables.length === 0) return;
  if (!tables.includes("bulwark_migrations")) {
    throw new DatabaseSchemaError(
      `${label} holds tables that are not Bulwark's (${tables.slice(0, 3).join(", ")}${tables.length > 3 ? ", ..." : ""}); point database.path at a new file`,
    );
  }
  const knownTags = new Set(known.map((migration) => migration.tag));
  const unknown = sqlite
    .query<{ tag: string }, []>("SELECT tag FROM bulwark_migrations ORDER BY tag")
    .all()
    .filter((row) => !knownTags.has(row.tag));
  if (unknown.length > 0) {
    throw new DatabaseSchemaError(
      `${label} was migrated by a newer Bulwark (migration ${unknown[0]?.tag} is unknown to this version); run that version or restore a backup`,
    );
  }
}

/**
 * Applies every embedded migration not yet recorded in `bulwark_migrations`, each in its own
 * transaction. Migrations are append-only: a recorded tag is never run again. A database of another
 * program or of a newer Bulwark is refused (DatabaseSchemaError) before anything is written.
 */
export function migrateDatabase(
  sqlite: Database,
  migrations: readonly { tag: string; sql: string }[] = embeddedMigrations,
  label = "the database",
): MigrationResult {
  assertOwnSchema(sqlite, label, migrations);
  sqlite.exec(
    "CREATE TABLE IF NOT EXISTS bulwark_migrations (tag TEXT PRIMARY KEY, applied_at TEXT NOT NULL)",
  );
  const isApplied = sqlite.query<{ tag: string }, [string]>(
    "SELECT tag FROM bulwark_migrations WHERE tag = ?",
  );
  const applied: string[] = [];
  for (const migration of migrations) {
    const statements = migration.sql
      .split("--> statement-breakpoint")
      .map((statement) => statement.trim())
      .filter((statement) => statement !== "");
    // IMMEDIATE takes the write lock before the check, so two processes migrating the same new
    // database at once apply each migration exactly once.
    const didApply = sqlite
      .transaction(() => {
        if (isApplied.get(migration.tag)) return false;
        for (const statement of statements) sqlite.exec(statement);
        sqlite
          .query("INSERT INTO bulwark_migrations (tag, applied_at) VALUES (?, ?)")
          .run(migration.tag, new Date().toISOString());
        return true;
      })
      .immediate();
    if (didApply) applied.push(migration.tag);
  }
  return { applied, total: migrations.length };
}
