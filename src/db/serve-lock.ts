import { Database } from "bun:sqlite";
import { chmodSync, existsSync, mkdirSync, readFileSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { DatabaseOpenError } from "./client";

/** Held by a running `serve` for its database; a second `serve` on the same file is refused. */
export interface ServeLock {
  release(): void;
}

/** Raised when another process already serves this database. */
export class DatabaseInUseError extends Error {}

/**
 * Takes the database's serve lock: an exclusive SQLite lock on `<database>.lock`, which the operating
 * system releases when the process ends, however it ends (a pid file alone would go stale after a kill
 * -9). The holder's pid is written beside it in `<database>.pid` for the refusal message. One server per
 * database: two would run two webhook dispatchers and two sets of jobs and rate limits that disagree.
 * CLI commands (`backup`, `admin create`) do not take it and keep working beside a running server.
 */
export function acquireServeLock(databasePath: string): ServeLock {
  let lock: Database;
  let lockPath = `${databasePath}.lock`;
  let pidPath = `${databasePath}.pid`;
  try {
    mkdirSync(dirname(databasePath), { recursive: true, mode: 0o700 });
    // Named after the file itself, so that a symbolic link or another spelling of the path to the
    // same database meets the same lock.
    const realPath = existsSync(databasePath)
      ? realpathSync(databasePath)
      : join(realpathSync(dirname(databasePath)), basename(databasePath));
    lockPath = `${realPath}.lock`;
    pidPath = `${realPath}.pid`;
    lock = new Database(lockPath, { create: true });
    chmodSync(lockPath, 0o600);
  } catch (error) {
    throw new DatabaseOpenError(
      `cannot open the lock file ${lockPath}: ${(error as Error).message.split("\n")[0]}`,
    );
  }
  try {
    lock.exec("PRAGMA busy_timeout = 0");
    lock.exec("PRAGMA journal_mode = MEMORY");
    lock.exec("PRAGMA locking_mode = EXCLUSIVE");
    lock.exec("BEGIN EXCLUSIVE");
  } catch (error) {
    lock.close();
    if (error instanceof Error && /locked|busy/i.test(error.message)) {
      let holder = "another process";
      try {
        const pid = readFileSync(pidPath, "utf8").trim();
        if (/^\d+$/.test(pid)) holder = `process ${pid}`;
      } catch {
        // No pid file: the holder did not get to write it yet.
      }
      throw new DatabaseInUseError(
        `database ${databasePath} is already served by ${holder}; stop it first (one server per database)`,
      );
    }
    throw new DatabaseOpenError(
      `cannot open the lock file ${lockPath}: ${(error as Error).message.split("\n")[0]}`,
    );
  }
  writeFileSync(pidPath, `${process.pid}\n`, { mode: 0o600 });
  return {
    release: () => {
      rmSync(pidPath, { force: true });
      lock.close();
    },
  };
}
