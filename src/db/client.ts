import { Database, type Statement } from "bun:sqlite";
import { AsyncLocalStorage } from "node:async_hooks";
import { chmodSync, mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { drizzle } from "drizzle-orm/bun-sqlite";
import { flushLog } from "../lib/log";
import { isPgHandle, withPgTransaction } from "./pg/client";
import * as schema from "./schema";

export type Db = ReturnType<typeof drizzle<typeof schema>>;
/**
 * A transaction handle: the database as seen by the writer connection inside `withTransaction`. Domain
 * functions accept `DbOrTx` so they compose inside one transaction.
 */
export type Tx = Db;
export type DbOrTx = Db | Tx;

export interface OpenDatabaseOptions {
  path: string;
  synchronous: "full" | "normal";
}

export interface DatabaseHandle {
  /** The database for reads outside a transaction (the reader connection); transactions go through it too. */
  db: Db;
  /** The writer connection: migrations, backups and every transaction run on it. */
  sqlite: Database;
  close(): void;
}

/** The database file could not be opened; the message names the file and the cause in one line. */
export class DatabaseOpenError extends Error {}

/** Opens the file, turning the file system's and SQLite's errors into one line that names the file. */
function openFile(path: string): Database {
  try {
    if (path !== ":memory:") mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    const sqlite = new Database(path, { create: true, strict: true });
    // The database holds the JWT signing key and webhook secrets: owner-only. SQLite gives the -wal and
    // -shm files the database file's permissions.
    if (path !== ":memory:") chmodSync(path, 0o600);
    sqlite.exec("PRAGMA busy_timeout = 5000");
    // Reading the schema makes SQLite open the file for real: a file that is not a database fails here.
    sqlite.query("SELECT count(*) FROM sqlite_master").get();
    return sqlite;
  } catch (error) {
    const code = (error as { code?: string }).code ?? "";
    const cause =
      code === "EACCES" || code === "EPERM"
        ? "permission denied (the folder and file must be writable by this user)"
        : code === "EROFS"
          ? "the file system is read-only"
          : code === "SQLITE_NOTADB"
            ? "the file is not a SQLite database"
            : code === "SQLITE_CANTOPEN"
              ? "SQLite cannot open it (does the folder exist, and is it writable?)"
              : ((error as Error).message.split("\n")[0] ?? String(error));
    throw new DatabaseOpenError(`cannot open database ${path}: ${cause}`);
  }
}

/** WAL, the configured `synchronous` and foreign keys. */
function configureConnection(sqlite: Database, options: OpenDatabaseOptions): void {
  // Switching a new file to WAL takes an exclusive lock and does not wait on busy_timeout: another
  // process opening the same new database at that moment makes it fail at once, so it is retried.
  if (!retryWhileLocked(() => sqlite.exec("PRAGMA journal_mode = WAL"))) {
    throw new DatabaseOpenError(`cannot open database ${options.path}: it is locked by another process`);
  }
  // bun:sqlite leaves synchronous=FULL after switching to WAL unless told otherwise.
  sqlite.exec(`PRAGMA synchronous = ${options.synchronous === "normal" ? "NORMAL" : "FULL"}`);
  sqlite.exec("PRAGMA foreign_keys = ON");
}

/** Opens SQLite with WAL, the configured `synchronous`, foreign keys and a busy timeout. */
function openConnection(options: OpenDatabaseOptions): Database {
  const sqlite = openFile(options.path);
  try {
    configureConnection(sqlite, options);
    return sqlite;
  } catch (error) {
    sqlite.close();
    if (error instanceof DatabaseOpenError) throw error;
    throw new DatabaseOpenError(
      `cannot open database ${options.path}: ${(error as Error).message.split("\n")[0] ?? String(error)}`,
    );
  }
}

/**
 * Opens the database on two connections: a writer, used only by `withTransaction` (one transaction at
 * a time, in turn), and a reader for everything read outside a transaction. With WAL the reader sees
 * what is committed and never waits for the writer, and a transaction that awaits cannot let another
 * request's statements into itself. The reader is `query_only`: a write that bypasses
 * `withTransaction` fails at once instead of waiting for the writer's lock. An in-memory database
 * exists only on its one connection, which then does both.
 */
export function openDatabase(options: OpenDatabaseOptions): DatabaseHandle {
  const writerConnection = openConnection(options);
  let readerConnection = writerConnection;
  if (options.path !== ":memory:") {
    try {
      readerConnection = openConnection(options);
      readerConnection.exec("PRAGMA query_only = ON");
    } catch (error) {
      writerConnection.close();
      throw error;
    }
  }
  const writerCache = withStatementCache(writerConnection);
  const readerCache =
    readerConnection === writerConnection ? writerCache : withStatementCache(readerConnection);
  const writer = drizzle({ client: writerCache.client, schema });
  const reader =
    readerConnection === writerConnection ? writer : drizzle({ client: readerCache.client, schema });
  const runner = new TransactionRunner(writer, writerCache.client);
  transactionRunners.set(writer, runner);
  transactionRunners.set(reader, runner);
  return {
    db: reader,
    sqlite: writerConnection,
    close: () => {
      // A statement still alive keeps the connection (and the WAL) open after close().
      readerCache.finalizeAll();
      if (readerConnection !== writerConnection) {
        writerCache.finalizeAll();
        closeWhenUnlocked(readerConnection);
      }
      closeWhenUnlocked(writerConnection);
    },
  };
}

/**
 * Closes the connection. The last connection to close checkpoints the WAL, which fails with "database
 * is locked" while another process (a second `migrate`, a running server) holds a lock; everything is
 * already committed then, so a few short retries are made and then the checkpoint is left to the next
 * connection rather than failing the command.
 */
function closeWhenUnlocked(sqlite: Database): void {
  const isClosed = retryWhileLocked(() => sqlite.close());
  if (!isClosed) {
    flushLog();
    console.warn("database close deferred: another process holds a lock");
  }
}

/** Runs `work`, retrying for up to about a second while SQLite answers "database is locked". */
function retryWhileLocked(work: () => void): boolean {
  for (let attempt = 0; ; attempt++) {
    try {
      work();
      return true;
    } catch (error) {
      if (!(error instanceof Error && /locked|busy/i.test(error.message))) throw error;
      if (attempt >= 20) return false;
      Bun.sleepSync(50);
    }
  }
}

/**
 * The SQLite connection under a database or transaction handle, for a hot path's constant SQL text: its
 * `prepare` hands back the statement compiled for that text the first time (the statement cache), so
 * nothing is built or parsed per call. Drizzle keeps the connection on its session.
 */
export function connectionOf(db: DbOrTx): Database {
  const client = (db as unknown as { session?: { client?: Database } }).session?.client;
  if (!client) throw new Error("drizzle's session no longer exposes its SQLite connection");
  return client;
}

/**
 * Runs `work`, a handful of reads, in one read transaction, so they see one snapshot and take SQLite's
 * WAL read lock once: outside a transaction every statement takes and drops it (~2.5 µs each here, more
 * than an indexed lookup). Inside a transaction already, `work` just runs in it.
 */
export function readTogether<T>(db: DbOrTx, work: () => T): T {
  const sqlite = connectionOf(db);
  if (sqlite.inTransaction) return work();
  sqlite.prepare("BEGIN DEFERRED").run();
  try {
    const result = work();
    sqlite.prepare("COMMIT").run();
    return result;
  } catch (error) {
    // Some failures end the transaction themselves; one still open must not outlive the request.
    if (sqlite.inTransaction) sqlite.prepare("ROLLBACK").run();
    throw error;
  }
}

/** The transaction a piece of work runs in, followed across its awaits. */
const transactionScope = new AsyncLocalStorage<TransactionRunner>();
const transactionRunners = new WeakMap<Db, TransactionRunner>();

/**
 * Runs transactions on the writer connection one at a time: a transaction begins once the one before
 * it has ended, in the order they asked. A transaction may await (its body is async), and nothing else
 * runs on the writer meanwhile.
 */
class TransactionRunner {
  private isBusy = false;
  private readonly waiting: (() => void)[] = [];
  private savepoints = 0;

  constructor(
    readonly writer: Db,
    private readonly connection: Database,
  ) {}

  async run<T>(work: (tx: Tx) => Promise<T> | T): Promise<T> {
    if (transactionScope.getStore() === this) return this.nested(work);
    if (this.isBusy) await new Promise<void>((resume) => this.waiting.push(resume));
    this.isBusy = true;
    try {
      this.connection.prepare("BEGIN IMMEDIATE").run();
      let result: T;
      try {
        // A body that does not await runs, and commits, in the caller's turn of the event loop.
        const outcome = transactionScope.run(this, () => work(this.writer));
        result = isPromiseLike(outcome) ? await outcome : outcome;
        this.connection.prepare("COMMIT").run();
      } catch (error) {
        // Some failures end the transaction themselves; one still open must not outlive the work.
        if (this.connection.inTransaction) this.connection.prepare("ROLLBACK").run();
        throw error;
      }
      return result;
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.isBusy = false;
    }
  }

  /** A transaction inside the running one: a savepoint, undone alone when its work fails. */
  private async nested<T>(work: (tx: Tx) => Promise<T> | T): Promise<T> {
    const name = `nested_${++this.savepoints}`;
    this.connection.prepare(`SAVEPOINT ${name}`).run();
    try {
      const result = await work(this.writer);
      this.connection.prepare(`RELEASE ${name}`).run();
      return result;
    } catch (error) {
      if (this.connection.inTransaction) {
        this.connection.prepare(`ROLLBACK TO ${name}`).run();
        this.connection.prepare(`RELEASE ${name}`).run();
      }
      throw error;
    } finally {
      this.savepoints--;
    }
  }
}

function isPromiseLike<T>(value: Promise<T> | T): value is Promise<T> {
  return typeof (value as { then?: unknown } | null)?.then === "function";
}

/** How a transaction runs on PostgreSQL (SQLite's one writer runs every transaction alone). */
export interface TransactionOptions {
  /**
   * SERIALIZABLE by default: PostgreSQL refuses, and Bulwark runs again, a transaction that would break
   * serial order. A path many servers run at once on the same rows (an organization's enrollments)
   * takes READ COMMITTED and orders itself with `takeTurn` (dialect.ts), so that it waits its turn
   * instead of being refused again and again.
   */
  isolation?: "serializable" | "read committed";
  /**
   * Run the transaction again after a unique violation (23505) on PostgreSQL. For a transaction that
   * looks for a duplicate before it inserts, under READ COMMITTED: a concurrent one that inserted the
   * same value first makes the insert fail once it commits, and the next run's check finds that row and
   * refuses as it should (an enrollment's WireGuard key, which two organizations' turns do not order).
   */
  retryUniqueViolations?: boolean;
}

/**
 * Runs `work` in one transaction (state change, audit row and outbox event together): committed when
 * `work` resolves, rolled back when it throws. Inside `work`, every statement goes through `tx`; the
 * database handle `db` reads only what is committed. Called from inside a transaction, it runs in a
 * savepoint of that transaction. On SQLite, an immediate transaction on the writer connection; on
 * PostgreSQL, a SERIALIZABLE one, run again when PostgreSQL refuses it (src/db/pg/client.ts).
 */
export function withTransaction<T>(
  db: DbOrTx,
  work: (tx: Tx) => Promise<T> | T,
  options: TransactionOptions = {},
): Promise<T> {
  const runner = transactionRunners.get(db);
  if (runner) return runner.run(work);
  if (isPgHandle(db)) return withPgTransaction(db, work, options);
  throw new Error("withTransaction: not a database opened by openDatabase or openPostgres");
}

const MAX_CACHED_STATEMENTS = 2000;

/**
 * Drizzle prepares every query anew; against this schema SQLite's prepare (parse and plan) costs more
 * than running the query (measured ~150 µs vs ~5 µs for a lookup by id). This hands Drizzle the same
 * compiled statement for the same SQL text. Statements run to completion synchronously, so sharing one
 * is safe. Nothing is evicted, because Drizzle's prepared queries hold on to theirs; the distinct SQL
 * texts of this app number in the hundreds, and past the cap new texts are simply not cached.
 * `finalizeAll` releases them so that closing the database really closes it.
 */
function withStatementCache(sqlite: Database): { client: Database; finalizeAll: () => void } {
  const cache = new Map<string, Statement>();
  const prepare = (sql: string): Statement => {
    const cached = cache.get(sql);
    if (cached) return cached;
    const statement = sqlite.prepare(sql);
    if (cache.size < MAX_CACHED_STATEMENTS) cache.set(sql, statement);
    return statement;
  };
  const client = new Proxy(sqlite, {
    get(target, property) {
      if (property === "prepare") return prepare;
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return {
    client,
    finalizeAll: () => {
      for (const statement of cache.values()) statement.finalize();
      cache.clear();
    },
  };
}
