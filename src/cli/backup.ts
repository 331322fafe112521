import { chmodSync, existsSync } from "node:fs";
import type { Config } from "../config/config-schema";
import { openDatabase } from "../db/client";
import { CommandFailure, UsageError } from "./args";

/**
 * `bulwark backup FILE`: VACUUM INTO writes a consistent snapshot while the server keeps running
 * (readers and writers are not blocked for long; the copy is one transaction's view).
 */
export function backupCommand(config: Readonly<Config>, target: string | undefined): void {
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
