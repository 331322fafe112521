import { Database } from "bun:sqlite";
import { chmodSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { drizzle } from "drizzle-orm/bun-sqlite";
import * as schema from "./schema";

export type Db = ReturnType<typeof drizzle<typeof schema>>;
/** A transaction handle; domain functions accept `Db | Tx` so they compose inside one transaction. */
export type Tx = Parameters<Parameters<Db["transaction"]>[0]>[0];
export type DbOrTx = Db | Tx;

export interface OpenDatabaseOptions {
  path: string;
  synchronous: "full" | "normal";
}

export interface DatabaseHandle {
  db: Db;
  sqlite: Database;
  close(): void;
}

/** Opens SQLite with WAL, the configured `synchronous`, foreign keys and a busy timeout. */
export function openDatabase(options: OpenDatabaseOptions): DatabaseHandle {
  if (options.path !== ":memory:") mkdirSync(dirname(options.path), { recursive: true, mode: 0o700 });
  const sqlite = new Database(options.path, { create: true, strict: true });
  // The database holds the JWT signing key and webhook secrets: owner-only. SQLite gives the -wal and
  // -shm files the database file's permissions.
  if (options.path !== ":memory:") chmodSync(options.path, 0o600);
  sqlite.exec("PRAGMA busy_timeout = 5000");
  sqlite.exec("PRAGMA journal_mode = WAL");
  // bun:sqlite leaves synchronous=FULL after switching to WAL unless told otherwise.
  sqlite.exec(`PRAGMA synchronous = ${options.synchronous === "normal" ? "NORMAL" : "FULL"}`);
  sqlite.exec("PRAGMA foreign_keys = ON");
  const db = drizzle({ client: sqlite, schema });
  return { db, sqlite, close: () => sqlite.close() };
}

/** Runs `work` in one immediate transaction (state change, audit row and outbox event together). */
export function withTransaction<T>(db: Db, work: (tx: Tx) => T): T {
  return db.transaction(work, { behavior: "immediate" });
}
