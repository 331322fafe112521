/**
 * Opens the store the configuration names (SQLite at `database.path`, or PostgreSQL at `database.url`),
 * checks that it holds Bulwark's schema and applies the migrations it lacks: what `serve`, `migrate`
 * and every command on the database do first.
 */
import { readFileSync } from "node:fs";
import type { Config } from "../config/config-schema";
import { isPostgresConfig } from "../config/config-schema";
import { type DatabaseHandle, type Db, openDatabase } from "./client";
import { migrateDatabase } from "./migrate";
import { openPostgres, type PgDatabaseHandle } from "./pg/client";
import { migratePg } from "./pg/migrate-pg";
import { assertBulwarkSchema } from "./schema-check";

export type StoreHandle = (DatabaseHandle & { store: "sqlite"; label: string }) | PgDatabaseHandle;

/** Either store, as the domain sees it, with a way to close it. */
export interface OpenedStore {
  handle: StoreHandle;
  db: Db;
  /** The migrations this start applied, and how many the store holds. */
  applied: string[];
  total: number;
}

/** A password file that cannot be read, or is empty; the message names it. */
export class PasswordFileError extends Error {}

/** The password in `database.password_file`: its first line. */
function readPasswordFile(path: string): string {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new PasswordFileError(
      `cannot read database.password_file ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
    );
  }
  const password = text.split(/\r?\n/)[0] ?? "";
  if (password === "") throw new PasswordFileError(`database.password_file ${path} is empty`);
  return password;
}

/** Opens the configured store without migrating it. */
export async function openConfiguredStore(database: Readonly<Config["database"]>): Promise<StoreHandle> {
  if (!isPostgresConfig(database)) {
    const handle = openDatabase({ path: database.path, synchronous: database.synchronous });
    return { ...handle, store: "sqlite", label: `database ${database.path}` };
  }
  return await openPostgres({
    url: database.url,
    ...(database.password_file !== "" ? { password: readPasswordFile(database.password_file) } : {}),
    poolSize: database.pool_size,
    timeoutSeconds: database.timeout_seconds,
  });
}

/** Opens the configured store, checks that its schema is Bulwark's and migrates it. */
export async function openMigratedStore(database: Readonly<Config["database"]>): Promise<OpenedStore> {
  const handle = await openConfiguredStore(database);
  try {
    if (handle.store === "sqlite") {
      assertBulwarkSchema(handle.sqlite, handle.label);
      const { applied, total } = migrateDatabase(handle.sqlite, { label: handle.label });
      return { handle, db: handle.db, applied, total };
    }
    const { applied, total } = await migratePg(handle.sql, { label: handle.label });
    return { handle, db: handle.db, applied, total };
  } catch (error) {
    await handle.close();
    throw error;
  }
}
