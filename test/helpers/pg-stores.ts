/**
 * The two stores side by side for the schema tests: a fresh SQLite database migrated by migrateDatabase
 * and a fresh PostgreSQL database migrated by migratePg, on the shared throwaway cluster.
 */
import { join } from "node:path";
import { SQL } from "bun";
import { ensurePostgresql } from "../../scripts/test-tools";
import { type DatabaseHandle, openDatabase } from "../../src/db/client";
import { migrateDatabase } from "../../src/db/migrate";
import { migratePg } from "../../src/db/pg/migrate-pg";
import { sharedPgCluster } from "./pg-cluster";

let databases = 0;

/**
 * A new, empty PostgreSQL database whose default collation is linguistic (ICU en-US: "a" < "B" < "b",
 * punctuation ignored first), as many installations' are: what the schema orders bytewise must then be
 * its own doing, not the test cluster's C locale. Needs PostgreSQL 15 or later (LOCALE_PROVIDER).
 */
export async function createLinguisticDatabase(): Promise<string> {
  const name = `linguistic_${process.pid}_${++databases}`;
  await onCluster(
    `CREATE DATABASE ${name} TEMPLATE template0 ENCODING 'UTF8' LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'`,
  );
  return (await sharedPgCluster()).url.replace(/\/postgres$/, `/${name}`);
}

/** A migrated PostgreSQL database (linguistic default collation) and a connection pool to it. */
export async function migratedPgDatabase(): Promise<{ url: string; sql: SQL }> {
  const url = await createLinguisticDatabase();
  const sql = new SQL(url, { max: 4 });
  await migratePg(sql);
  return { url, sql };
}

/** A migrated in-memory SQLite database, opened as the server opens its file. */
export function migratedSqliteDatabase(): DatabaseHandle {
  const database = openDatabase({ path: ":memory:", synchronous: "full" });
  migrateDatabase(database.sqlite);
  return database;
}

/** The name of the database the others are copies of. */
let template: Promise<string> | undefined;

/**
 * A new database holding the migrated schema and nothing else, for a test app on PostgreSQL
 * (TEST_STORE=postgresql): a copy of one database migrated once per test process (CREATE DATABASE ...
 * TEMPLATE, a file copy), so that each app starts from what `migrate` makes without paying for it.
 */
export async function newMigratedPgDatabase(): Promise<string> {
  template ??= (async () => {
    const url = await createLinguisticDatabase();
    const sql = new SQL(url, { max: 1 });
    try {
      await migratePg(sql);
    } finally {
      await sql.close();
    }
    return new URL(url).pathname.slice(1);
  })();
  const name = await template;
  const database = `app_${process.pid}_${++databases}`;
  // FILE_COPY copies the template's files, in half the time of the default (writing them through the WAL).
  await onCluster(`CREATE DATABASE ${database} TEMPLATE ${name} STRATEGY FILE_COPY`);
  return (await sharedPgCluster()).url.replace(/\/postgres$/, `/${database}`);
}

/**
 * Drops a database newMigratedPgDatabase made, once its app is closed (connections still open are
 * ended): a test process makes hundreds, which would otherwise fill the cluster's memory-backed folder.
 */
export async function dropPgDatabase(url: string): Promise<void> {
  // IF EXISTS: an app closed twice (by its test, then by freshTestApps) drops it once.
  await onCluster(`DROP DATABASE IF EXISTS ${new URL(url).pathname.slice(1)} WITH (FORCE)`);
}

/** Runs one statement on the shared cluster as its superuser (CREATE and DROP DATABASE). */
async function onCluster(statement: string): Promise<void> {
  const connection = new SQL((await sharedPgCluster()).url, { max: 1 });
  try {
    await connection.unsafe(statement);
  } finally {
    await connection.close();
  }
}

/** Everything a PostgreSQL database holds, as `pg_dump --data-only` writes it (what a stolen dump shows). */
export function dumpPgDatabase(url: string): Buffer {
  const dump = Bun.spawnSync([join(ensurePostgresql(), "pg_dump"), "--data-only", "--dbname", url], {
    stdout: "pipe",
    stderr: "pipe",
  });
  if (dump.exitCode !== 0) throw new Error(`pg_dump failed: ${dump.stderr.toString()}`);
  return Buffer.from(dump.stdout);
}
