import { chmodSync, existsSync } from "node:fs";
import { type Config, isPostgresConfig } from "../config/config-schema";
import { openDatabase } from "../db/client";
import { CommandFailure, UsageError } from "./args";

/** What `backup` and `restore` say on PostgreSQL, whose own tools do this better. */
export const POSTGRES_BACKUP =
  "database.url is PostgreSQL: back it up with pg_dump (pg_dump --format=custom --file=bulwark.dump URL) and restore it with pg_restore (pg_restore --clean --if-exists --dbname=URL bulwark.dump); keep database.key_file with the dump, it opens the secrets in it";

/**
 * `bulwark backup FILE`: VACUUM INTO writes a consistent snapshot while the server keeps running
 * (readers and writers are not blocked for long; the copy is one transaction's view).
 */
export function backupCommand(config: Readonly<Config>, target: string | undefined): void {
  if (isPostgresConfig(config.database)) throw new UsageError(POSTGRES_BACKUP);
  if (!target) throw new UsageError("backup needs a target FILE");
  if (existsSync(target)) throw new UsageError(`backup target ${target} already exists`);
  if (config.database.path === ":memory:") throw new UsageError("cannot back up an in-memory database");
  if (!existsSync(config.database.path))
    throw new UsageError(`database ${config.database.path} does not exist`);
  const database = openDatabase({ path: config.database.path, synchronous: config.database.synchronous });
  try {
    try {
      database.sqlite.query("VACUUM INTO ?").run(target);
    } catch (error) {
      throw new CommandFailure(
        `cannot write the backup to ${target}: ${(error as Error).message.split("\n")[0]}`,
      );
    }
    // A backup holds the same secrets as the database.
    chmodSync(target, 0o600);
    console.log(`Backed up ${config.database.path} to ${target}`);
  } finally {
    database.close();
  }
}
