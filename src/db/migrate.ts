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
  const done = new Set(
    sqlite
      .query<{ tag: string }, []>("SELECT tag FROM bulwark_migrations")
      .all()
      .map((row) => row.tag),
  );
  const applied: string[] = [];
  for (const migration of migrations) {
    if (done.has(migration.tag)) continue;
    const statements = migration.sql
      .split("--> statement-breakpoint")
      .map((statement) => statement.trim())
      .filter((statement) => statement !== "");
    sqlite.transaction(() => {
      for (const statement of statements) sqlite.exec(statement);
      sqlite
        .query("INSERT INTO bulwark_migrations (tag, applied_at) VALUES (?, ?)")
        .run(migration.tag, new Date().toISOString());
    })();
    applied.push(migration.tag);
  }
  return { applied, total: migrations.length };
}
