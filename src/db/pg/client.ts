/**
 * The server's PostgreSQL store: a Bun.sql pool under Drizzle with the PostgreSQL tables, and its
 * transactions. `openPostgres` points the domain's tables at PostgreSQL's (src/db/tables.ts) before
 * anything is read.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { SQL as BunSql } from "bun";
import { drizzle } from "drizzle-orm/bun-sql";
import type { Db, Tx } from "../client";
import * as schema from "../schema-pg";
import { useTablesOf } from "../tables";
import { connectPg } from "./connect";

export interface PgOpenOptions {
  url: string;
  /** The password when it is not in the URL (database.password_file's contents). */
  password?: string;
  /** The most connections the pool holds (database.pool_size). */
  poolSize: number;
  /** Seconds to wait for a connection or a statement (database.timeout_seconds). */
  timeoutSeconds: number;
}

export interface PgDatabaseHandle {
  store: "postgresql";
  /** The pool as Drizzle sees it: reads outside a transaction, and `withTransaction`. */
  db: Db;
  /** The pool itself, for what is written as SQL text (migrations, health). */
  sql: BunSql;
  /** `postgresql://USER@HOST:PORT/DATABASE`, for messages. */
  label: string;
  close(): Promise<void>;
}

/** The transaction a piece of work runs in, followed across its awaits, per pool. */
const pgScope = new AsyncLocalStorage<{ root: Db; tx: Tx }>();
const pgRoots = new WeakSet<object>();
/** Each pool's gate for transactions (see TransactionGate). */
const gates = new WeakMap<object, TransactionGate>();

/**
 * Lets at most `limit` transactions run at once, the others waiting in turn (first come, first served).
 * A server runs its transactions one at a time, as on SQLite: transactions of one server that touch the
 * same rows (an enrollment token's use count, the lowest free VPN address) then never make each other
 * fail and run again, which under load (fifty enrollments with one token) exhausted the retries; and a
 * transaction that reads through the pool (`deps.db`) while it runs always finds a free connection.
 * Conflicts with another process (a command, a second server) are still caught by SERIALIZABLE and run
 * again. Check-ins are grouped into one transaction per batch (check-in-batcher.ts), so they do not queue
 * one by one.
 */
class TransactionGate {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly limit: number) {}

  async enter(): Promise<void> {
    if (this.running < this.limit) {
      this.running++;
      return;
    }
    await new Promise<void>((resume) => this.waiting.push(resume));
  }

  leave(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.running--;
  }
}

/** Opens the pool and checks that it answers; points the domain's tables at PostgreSQL's. */
export async function openPostgres(options: PgOpenOptions): Promise<PgDatabaseHandle> {
  useTablesOf("postgresql");
  const { sql, label } = await connectPg(options.url, {
    max: options.poolSize,
    connectionTimeout: options.timeoutSeconds,
    idleTimeout: 60,
    ...(options.password !== undefined ? { password: options.password } : {}),
  });
  const db = drizzle({ client: sql, schema }) as unknown as Db;
  pgRoots.add(db);
  gates.set(db, new TransactionGate(1));
  return { store: "postgresql", db, sql, label, close: () => sql.close({ timeout: 5 }) };
}

/** Whether a handle is a PostgreSQL pool opened by openPostgres, or one of its transactions. */
export function isPgHandle(db: object): boolean {
  return (
    pgRoots.has(db) || (db as { constructor?: { name?: string } }).constructor?.name === "BunSQLTransaction"
  );
}

/** Whether a handle is a transaction (or savepoint) on PostgreSQL rather than the pool. */
export function isPgTransaction(db: object): boolean {
  return !pgRoots.has(db) && isPgHandle(db);
}

/** SQLSTATEs after which a whole transaction may simply run again: a serialization failure, a deadlock. */
const RETRYABLE = new Set(["40001", "40P01"]);
const ATTEMPTS = 8;

type PgRoot = {
  transaction<T>(work: (tx: Tx) => Promise<T>, config?: { isolationLevel: string }): Promise<T>;
};

/**
 * Runs `work` in a SERIALIZABLE transaction, so that a rule spanning rows holds as it did with SQLite's
 * one writer (the last admin, the lockout count): PostgreSQL refuses a transaction that would break
 * serial order, and it is run again (a few times, after a short random pause). Work inside a
 * transaction already runs in a savepoint of it. Bodies have no effect outside the database, so
 * running one again is safe.
 */
export async function withPgTransaction<T>(db: Db | Tx, work: (tx: Tx) => Promise<T> | T): Promise<T> {
  const current = pgScope.getStore();
  const nestedIn = !pgRoots.has(db) ? (db as Tx) : current?.root === db ? current.tx : undefined;
  if (nestedIn) {
    const root = current?.root ?? db;
    return (nestedIn as unknown as PgRoot).transaction((tx) =>
      pgScope.run({ root, tx }, async () => work(tx)),
    );
  }
  const gate = gates.get(db);
  await gate?.enter();
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        return await (db as unknown as PgRoot).transaction(
          (tx) => pgScope.run({ root: db, tx }, async () => work(tx)),
          { isolationLevel: "serializable" },
        );
      } catch (error) {
        if (attempt >= ATTEMPTS || !RETRYABLE.has(sqlStateOf(error) ?? "")) throw error;
        await Bun.sleep(Math.random() * 5 * attempt);
      }
    }
  } finally {
    gate?.leave();
  }
}

/** The SQLSTATE of a PostgreSQL error (Bun.sql keeps it as `errno`), maybe under a wrapper's `cause`. */
export function sqlStateOf(error: unknown): string | undefined {
  for (let current = error; current instanceof Error; current = current.cause) {
    const { errno, code } = current as { errno?: unknown; code?: unknown };
    if (typeof errno === "string" && /^[0-9A-Z]{5}$/.test(errno)) return errno;
    if (typeof code === "string" && /^[0-9A-Z]{5}$/.test(code)) return code;
  }
  return undefined;
}
