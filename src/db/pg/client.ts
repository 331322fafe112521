/**
 * The server's PostgreSQL store: a Bun.sql pool under Drizzle with the PostgreSQL tables, and its
 * transactions. `openPostgres` points the domain's tables at PostgreSQL's (src/db/tables.ts) before
 * anything is read.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import { SQL as BunSql } from "bun";
import { sql as drizzleSql, is } from "drizzle-orm";
import { drizzle } from "drizzle-orm/bun-sql";
import { PgTransaction } from "drizzle-orm/pg-core";
import type { ConnectionPoolSnapshot } from "../../lib/metrics";
import type { Db, TransactionOptions, Tx } from "../client";
import * as schema from "../schema-pg";
import { useTablesOf } from "../tables";
import { connectPg } from "./connect";
import { guardPool, newPoolActivity, PgNoAnswerError, type PoolActivity } from "./pool-guard";

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
  /**
   * The pool as the metrics show it, read at each scrape: its open connections as PostgreSQL counts
   * them (this process's application_name), the rest as pool-guard.ts counts them.
   */
  poolState(): Promise<ConnectionPoolSnapshot>;
  close(): Promise<void>;
}

/** The transaction a piece of work runs in, followed across its awaits, per pool. */
const pgScope = new AsyncLocalStorage<{ root: Db; tx: Tx }>();
/** Each pool's Drizzle handle, with what its pool is doing and its gate for transactions. */
const pgRoots = new WeakMap<object, { activity: PoolActivity; gate: TransactionGate }>();

/**
 * How long Bulwark waits for PostgreSQL beyond database.timeout_seconds before giving up on an answer:
 * PostgreSQL's own statement_timeout, sent at the same time, normally ends the statement first.
 */
const NO_ANSWER_GRACE_MS = 500;

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

  constructor(
    private readonly limit: number,
    private readonly activity: PoolActivity,
    /** How long a transaction waits for its turn before it is refused as the database not answering. */
    private readonly waitLimitMs: number,
  ) {}

  async enter(): Promise<void> {
    if (this.running < this.limit) {
      this.running++;
      return;
    }
    this.activity.waitingTransactions++;
    try {
      await new Promise<void>((resume, refuse) => {
        const timer = setTimeout(() => {
          const index = this.waiting.indexOf(turn);
          if (index !== -1) this.waiting.splice(index, 1);
          refuse(new PgNoAnswerError("a turn to run a transaction", this.waitLimitMs / 1000));
        }, this.waitLimitMs);
        const turn = () => {
          clearTimeout(timer);
          resume();
        };
        this.waiting.push(turn);
      });
    } finally {
      this.activity.waitingTransactions--;
    }
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
  // Each process names its connections, so that PostgreSQL can say which of them are this pool's.
  const applicationName = `bulwark:${process.pid}:${crypto.randomUUID().slice(0, 8)}`;
  const { sql, label } = await connectPg(options.url, {
    max: options.poolSize,
    connectionTimeout: options.timeoutSeconds,
    idleTimeout: 60,
    // Set on every connection as it opens: a statement (a lock wait included) ends after the timeout.
    connection: { statement_timeout: options.timeoutSeconds * 1000, application_name: applicationName },
    ...(options.password !== undefined ? { password: options.password } : {}),
  });
  const activity = newPoolActivity();
  const guarded = guardPool(sql, options.timeoutSeconds * 1000 + NO_ANSWER_GRACE_MS, activity);
  const pgDb = drizzle({ client: guarded as BunSql, schema });
  const db = pgDb as unknown as Db;
  pgRoots.set(db, { activity, gate: new TransactionGate(1, activity, options.timeoutSeconds * 1000) });
  const poolState = async (): Promise<ConnectionPoolSnapshot> => {
    // The counts as the scrape found them, before its own query waits for a connection (under the
    // deadline, as every query of the server's).
    const counts = { ...activity };
    const [row] = (await pgDb.execute(
      drizzleSql`SELECT count(*)::int AS open FROM pg_stat_activity WHERE application_name = ${applicationName}`,
    )) as unknown as { open: number }[];
    return { maxConnections: options.poolSize, openConnections: row?.open ?? 0, ...counts };
  };
  return { store: "postgresql", db, sql, label, poolState, close: () => sql.close({ timeout: 5 }) };
}

/** Whether a handle is a PostgreSQL pool opened by openPostgres, or one of its transactions. */
export function isPgHandle(db: object): boolean {
  return pgRoots.has(db) || is(db, PgTransaction);
}

/** Whether a handle is a transaction (or savepoint) on PostgreSQL rather than the pool. */
export function isPgTransaction(db: object): boolean {
  return !pgRoots.has(db) && isPgHandle(db);
}

/** SQLSTATEs after which a whole transaction may simply run again: a serialization failure, a deadlock. */
const RETRYABLE = new Set(["40001", "40P01"]);
const UNIQUE_VIOLATION = "23505";
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
export async function withPgTransaction<T>(
  db: Db | Tx,
  work: (tx: Tx) => Promise<T> | T,
  options: TransactionOptions = {},
): Promise<T> {
  const current = pgScope.getStore();
  const nestedIn = !pgRoots.has(db) ? (db as Tx) : current?.root === db ? current.tx : undefined;
  if (nestedIn) {
    const root = current?.root ?? db;
    return (nestedIn as unknown as PgRoot).transaction((tx) =>
      pgScope.run({ root, tx }, async () => work(tx)),
    );
  }
  const root = pgRoots.get(db);
  await root?.gate.enter();
  try {
    for (let attempt = 1; ; attempt++) {
      try {
        return await (db as unknown as PgRoot).transaction(
          (tx) => pgScope.run({ root: db, tx }, async () => work(tx)),
          { isolationLevel: options.isolation ?? "serializable" },
        );
      } catch (error) {
        const state = sqlStateOf(error) ?? "";
        const retryable =
          RETRYABLE.has(state) || (options.retryUniqueViolations === true && state === UNIQUE_VIOLATION);
        if (attempt >= ATTEMPTS || !retryable) throw error;
        if (root) root.activity.retriedTransactions++;
        await Bun.sleep(Math.random() * 5 * attempt);
      }
    }
  } finally {
    root?.gate.leave();
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

/** Bun.sql's codes for a connection that could not be opened or signed in to, was lost, or timed out. */
const UNAVAILABLE_CODES = new Set(
  [
    "CONNECTION_CLOSED",
    "CONNECTION_FAILED",
    "CONNECTION_REFUSED",
    "CONNECTION_TIMEOUT",
    "IDLE_TIMEOUT",
    "LIFETIME_TIMEOUT",
    "QUERY_CANCELLED",
    "TLS_NOT_AVAILABLE",
    "TLS_UPGRADE_FAILED",
    "AUTHENTICATION_FAILED_PBKDF2",
    "UNKNOWN_AUTHENTICATION_METHOD",
    "UNSUPPORTED_AUTHENTICATION_METHOD",
    "INVALID_SERVER_KEY",
    "INVALID_SERVER_SIGNATURE",
    "SASL_SIGNATURE_MISMATCH",
    "SASL_NO_KNOWN_MECHANISM",
    "CHANNEL_BINDING_REQUIRED",
    "CHANNEL_BINDING_FAILED",
  ].map((code) => `ERR_POSTGRES_${code}`),
);

/**
 * SQLSTATEs of a server that cannot serve now (PostgreSQL's Appendix A): its shutdown or start
 * (57P01 admin_shutdown, 57P02 crash_shutdown, 57P03 cannot_connect_now, 57P05 idle_session_timeout),
 * a statement ended by statement_timeout (57014) or lock_timeout (55P03), and an idle transaction ended
 * by the server (25P03); and whole classes: 08 connection exception, 28 invalid authorization (a
 * password changed under a running server), 53 insufficient resources (disk full, too many
 * connections), 58 system error (I/O).
 */
const UNAVAILABLE_STATES = new Set(["57P01", "57P02", "57P03", "57P05", "57014", "55P03", "25P03"]);
const UNAVAILABLE_CLASSES = new Set(["08", "28", "53", "58"]);

/**
 * Whether an error (or one of its causes: Drizzle wraps the driver's) says PostgreSQL cannot be reached
 * or cannot serve now, rather than that the statement was wrong: what requests answer with 503
 * database_unavailable.
 */
export function isPgUnavailable(error: unknown): boolean {
  for (let current = error; current instanceof Error; current = current.cause) {
    if (current instanceof PgNoAnswerError) return true;
    if (!(current instanceof BunSql.PostgresError)) continue;
    if (UNAVAILABLE_CODES.has(current.code)) return true;
    const state = current.errno;
    if (state && (UNAVAILABLE_STATES.has(state) || UNAVAILABLE_CLASSES.has(state.slice(0, 2)))) return true;
  }
  return false;
}
