import type { SQL } from "bun";
import { VERSION } from "../../version";
import {
  assertUsableSchema,
  type DatabaseSchema,
  DatabaseSchemaError,
  type MigrationResult,
  schemaFromRecords,
  statementsOf,
} from "../migrate";
import { embeddedPgMigrations } from "../migrations-pg.generated";

/**
 * `bulwark_migrations` on PostgreSQL: the SQLite table's columns (src/db/migrate.ts), typed as the
 * generated schema types them (text ordered bytewise, the instant as timestamptz(3)).
 */
export const CREATE_PG_MIGRATIONS_TABLE = `CREATE TABLE IF NOT EXISTS bulwark_migrations (
  tag text COLLATE "C" PRIMARY KEY,
  applied_at timestamp(3) with time zone NOT NULL,
  bulwark_version text COLLATE "C"
)`;

/**
 * The session-level advisory lock every migrating process takes first (a 64-bit key derived from a fixed
 * name), so that two processes never migrate one database at once: the second waits, then finds
 * everything applied.
 */
export const MIGRATION_LOCK_KEY = "hashtextextended('bulwark:migrate', 0)";

/**
 * What a PostgreSQL database's `bulwark_migrations` says about it (as readDatabaseSchema on SQLite): a
 * database whose public schema holds other tables and no `bulwark_migrations` is refused.
 */
export async function readPgDatabaseSchema(
  sql: SQL,
  label: string,
  known: readonly { tag: string }[] = embeddedPgMigrations,
): Promise<DatabaseSchema> {
  const tables = (
    await sql<{ name: string }[]>`
      SELECT table_name AS name FROM information_schema.tables
      WHERE table_schema = current_schema() ORDER BY table_name`
  ).map((row) => row.name);
  if (tables.length === 0) return { latestTag: null, appliedTags: [], unknownTags: [], migratedBy: null };
  if (!tables.includes("bulwark_migrations")) {
    throw new DatabaseSchemaError(
      `${label} holds tables that are not Bulwark's (${tables.slice(0, 3).join(", ")}${tables.length > 3 ? ", ..." : ""}); use a new, empty database`,
    );
  }
  const recorded = await sql<{ tag: string; version: string | null }[]>`
    SELECT tag, bulwark_version AS version FROM bulwark_migrations ORDER BY tag`;
  return schemaFromRecords(recorded, known);
}

/**
 * Applies every embedded PostgreSQL migration not yet recorded in `bulwark_migrations`, in order, each in
 * its own transaction (PostgreSQL's DDL is transactional: a failing migration leaves nothing behind). The
 * whole run holds a session advisory lock on one reserved connection, so a second process migrating the
 * same database waits for the first and then applies nothing. A database of another program or of a
 * newer Bulwark is refused (DatabaseSchemaError) before anything is written.
 */
export async function migratePg(
  sql: SQL,
  options: { migrations?: readonly { tag: string; sql: string }[]; label?: string; version?: string } = {},
): Promise<MigrationResult> {
  const { migrations = embeddedPgMigrations, label = "the database", version = VERSION } = options;
  const connection = await sql.reserve();
  let isUnlocked = false;
  try {
    // The server's pool ends statements after database.timeout_seconds; a migration (an index built on a
    // large table) or the wait for another process's may take longer. RESET gives the pool back its own.
    await connection.unsafe("SET statement_timeout = 0");
    await connection.unsafe(`SELECT pg_advisory_lock(${MIGRATION_LOCK_KEY})`);
    try {
      return await applyMigrations(connection, migrations, label, version);
    } finally {
      isUnlocked = await connection.unsafe(`SELECT pg_advisory_unlock(${MIGRATION_LOCK_KEY})`).then(
        () => true,
        () => false,
      );
    }
  } finally {
    // A connection that could not give the lock back (or take its pool's timeout again) is closed: its
    // session ends, and the lock with it.
    const isReusable =
      isUnlocked &&
      (await connection.unsafe("RESET statement_timeout").then(
        () => true,
        () => false,
      ));
    if (isReusable) await connection.release();
    else await connection.close();
  }
}

/** migratePg's work, once it holds the lock. */
async function applyMigrations(
  connection: SQL,
  migrations: readonly { tag: string; sql: string }[],
  label: string,
  version: string,
): Promise<MigrationResult> {
  assertUsableSchema(await readPgDatabaseSchema(connection, label, migrations), label, version, migrations);
  await connection.unsafe(CREATE_PG_MIGRATIONS_TABLE);
  const applied: string[] = [];
  for (const migration of migrations) {
    const didApply = await connection.begin(async (tx) => {
      const [recorded] = await tx`SELECT tag FROM bulwark_migrations WHERE tag = ${migration.tag}`;
      if (recorded) return false;
      for (const statement of statementsOf(migration)) await tx.unsafe(statement);
      await tx`INSERT INTO bulwark_migrations (tag, applied_at, bulwark_version)
               VALUES (${migration.tag}, ${new Date().toISOString()}, ${version})`;
      return true;
    });
    if (didApply) applied.push(migration.tag);
  }
  return { applied, total: migrations.length };
}
