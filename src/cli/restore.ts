import { Database } from "bun:sqlite";
import { chmodSync, chownSync, existsSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname } from "node:path";
import { type Config, isPostgresConfig, keyFileOf } from "../config/config-schema";
import { openDatabase } from "../db/client";
import { assertUsableSchema, readDatabaseSchema, schemaVersionOf } from "../db/migrate";
import { embeddedMigrations } from "../db/migrations.generated";
import { schemaProblems } from "../db/schema-check";
import { acquireServeLock } from "../db/serve-lock";
import { sealedSecretsReadable } from "../domain/system/check-sealed-secrets";
import { createSecretBox, readKeyFile } from "../lib/secret-box";
import { VERSION } from "../version";
import { CommandFailure, UsageError } from "./args";
import { POSTGRES_BACKUP } from "./backup";

/** Opens `file` read-only as a SQLite database, or says in one line why it is not one. */
function openBackup(file: string): Database {
  try {
    const database = new Database(file, { readonly: true });
    // Opening is lazy: the first read finds out whether this is a database at all.
    database.query("SELECT count(*) FROM sqlite_master").get();
    return database;
  } catch (error) {
    const cause = (error as Error).message.split("\n")[0] ?? "";
    throw new CommandFailure(
      /malformed|corrupt/i.test(cause)
        ? `${file} is damaged: ${cause}`
        : `${file} is not a SQLite database (${cause})`,
    );
  }
}

/**
 * Run as root (`sudo bulwark restore`), the new file would belong to root, and the service's own user
 * could not open it: it gets the owner of the database it replaces (or of its folder).
 */
function giveToDatabaseOwner(file: string, databasePath: string): void {
  if (process.getuid?.() !== 0) return;
  const owner = statSync(existsSync(databasePath) ? databasePath : dirname(databasePath));
  chownSync(file, owner.uid, owner.gid);
}

/** Refuses a backup that SQLite finds damaged, quoting its first finding. */
function assertIntact(database: Database, file: string): void {
  let findings: string[];
  try {
    findings = database
      .query<{ integrity_check: string }, []>("PRAGMA integrity_check")
      .all()
      .map((row) => row.integrity_check);
  } catch (error) {
    throw new CommandFailure(
      `${file} is damaged: PRAGMA integrity_check failed: ${(error as Error).message.split("\n")[0]}`,
    );
  }
  if (findings.length !== 1 || findings[0] !== "ok")
    throw new CommandFailure(
      `${file} is damaged: PRAGMA integrity_check found ${findings.length} problem(s), the first: ${findings[0]}`,
    );
}

/**
 * Moves the current database (and its write-ahead log, which may hold its latest transactions) aside as
 * `<database>.before-restore`; first folds the log into the file when SQLite can, so the kept copy is
 * one file.
 */
function keepCurrentDatabase(path: string, kept: string): void {
  try {
    const current = new Database(path);
    current.exec("PRAGMA wal_checkpoint(TRUNCATE)");
    current.close();
  } catch {
    // A damaged database (the reason to restore) is kept as it is, log included.
  }
  renameSync(path, kept);
  if (existsSync(`${path}-wal`)) renameSync(`${path}-wal`, `${kept}-wal`);
  rmSync(`${path}-shm`, { force: true });
}

/**
 * `bulwark restore FILE`, with the server stopped (it takes the serve lock, so a server cannot start
 * meanwhile): checks that FILE is a Bulwark database this version can run (not another program's, not
 * a newer schema), passes SQLite's integrity check and has exactly the tables, indexes, views and
 * triggers its recorded migrations define (a trigger added to a backup would run in the service);
 * keeps the current database as `<database>.before-restore`, then puts a compacted copy of FILE in its place (written beside it and
 * renamed, so a crash leaves either the old or the new database, never half of one).
 */
export async function restoreCommand(config: Readonly<Config>, file: string | undefined): Promise<void> {
  if (isPostgresConfig(config.database)) throw new UsageError(POSTGRES_BACKUP);
  if (!file) throw new UsageError("restore needs the backup FILE to restore");
  const path = config.database.path;
  if (path === ":memory:") throw new UsageError("cannot restore into an in-memory database");
  if (!existsSync(file)) throw new CommandFailure(`${file} does not exist`);
  if (statSync(file).isDirectory()) throw new CommandFailure(`${file} is a folder, not a database file`);
  const lock = acquireServeLock(path);
  try {
    const backup = openBackup(file);
    try {
      assertIntact(backup, file);
      const schema = readDatabaseSchema(backup, file);
      if (schema.latestTag === null)
        throw new CommandFailure(`${file} is not a Bulwark database (it has no Bulwark tables)`);
      assertUsableSchema(schema, file, VERSION);
      const problems = schemaProblems(backup, schema.appliedTags);
      if (problems.length > 0)
        throw new CommandFailure(problems.map((problem) => `restore refused: ${problem}`).join("\n"));
      const schemaTag = schema.latestTag;
      const kept = `${path}.before-restore`;
      if (existsSync(kept))
        throw new CommandFailure(
          `${file} is fit to restore, but ${kept} is there from an earlier restore: move it away (or delete it) first, so it is not overwritten`,
        );
      const staging = `${path}.restoring`;
      rmSync(staging, { force: true });
      // A copy through SQLite, not of the bytes: it includes what a -wal beside FILE still held.
      backup.query("VACUUM INTO ?").run(staging);
      chmodSync(staging, 0o600);
      giveToDatabaseOwner(staging, path);
      const hadDatabase = existsSync(path);
      if (hadDatabase) keepCurrentDatabase(path, kept);
      renameSync(staging, path);
      const pending = embeddedMigrations.filter((migration) => migration.tag > schemaTag).length;
      console.log(
        `Restored ${file} (schema version ${schemaVersionOf(schemaTag)}) to ${path}.${hadDatabase ? ` The previous database is kept as ${kept}.` : ""}`,
      );
      if (pending > 0)
        console.log(`The next start of serve applies ${pending} migration(s) to bring it to this version.`);
    } finally {
      backup.close();
    }
    await warnIfKeyDoesNotFit(config);
  } finally {
    lock.release();
  }
}

/** The restored secrets need the key file of the installation the backup came from. */
async function warnIfKeyDoesNotFit(config: Readonly<Config>): Promise<void> {
  const path = config.database.path;
  const keyFile = keyFileOf(config.database);
  const key = readKeyFile(keyFile);
  const restored = openDatabase({ path, synchronous: config.database.synchronous });
  try {
    const fits =
      key !== null && (await sealedSecretsReadable({ db: restored.db, secrets: createSecretBox(key) }));
    if (!fits)
      console.warn(
        `warning: ${keyFile} ${key === null ? "is missing" : "does not open the secrets sealed in the restored database"}: put back the key file of the installation the backup came from (webhook signatures, authenticator apps, device certificates and the VPN server key need it)`,
      );
  } finally {
    restored.close();
  }
}
