import type { Database } from "bun:sqlite";
import { embeddedMigrations } from "./migrations.generated";

export interface MigrationResult {
  applied: string[];
  total: number;
}

/**
 * Applies every embedded migration not yet recorded in `bulwark_migrations`, each in its own
 * transaction. Migrations are append-only: a recorded tag is never run again.
 */
export function migrateDatabase(
  sqlite: Database,
  migrations: readonly { tag: string; sql: string }[] = embeddedMigrations,
): MigrationResult {
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
