/**
 * The Bun.sql pool as Drizzle sees it, with a deadline on every wait for PostgreSQL, and the pool's
 * activity counted for the metrics.
 *
 * PostgreSQL ends a statement that runs longer than database.timeout_seconds itself (statement_timeout,
 * lock waits included), and Bun.sql gives up connecting after as long. What neither covers is a server
 * that stops answering on a connection already open (a network partition, a stopped or frozen host):
 * Bun.sql then waits for the answer forever, and so would the request. Here each wait (a statement, a
 * free connection for a transaction and its BEGIN, a savepoint, the COMMIT or ROLLBACK) fails with
 * PgNoAnswerError once it has lasted a little longer than the timeout. A transaction whose wait failed
 * is abandoned at once: its other statements fail, its body's outcome is never committed (Bun.sql rolls
 * it back when the connection answers again), and its caller gets the error without waiting for that.
 */
import type { SQL as BunSql } from "bun";
import type { ConnectionPoolSnapshot } from "../../lib/metrics";

/** PostgreSQL did not answer in time; the message says what was waited for. */
export class PgNoAnswerError extends Error {
  constructor(what: string, seconds: number) {
    super(`PostgreSQL did not answer within ${seconds} s (${what})`);
    this.name = "PgNoAnswerError";
  }
}

/** What the pool is doing now, and the transactions it has run again, as the metrics show them. */
export type PoolActivity = Omit<ConnectionPoolSnapshot, "maxConnections" | "openConnections">;

export function newPoolActivity(): PoolActivity {
  return { waitingTransactions: 0, activeTransactions: 0, pendingStatements: 0, retriedTransactions: 0 };
}

/** Bun.sql's client, as far as Drizzle uses it: statements, transactions and savepoints. */
interface SqlClient {
  unsafe(query: string, params?: unknown[]): Statement;
  begin<T>(work: (tx: SqlClient) => Promise<T>): Promise<T>;
  savepoint<T>(work: (tx: SqlClient) => Promise<T>): Promise<T>;
}

/** A statement not yet sent: Bun.sql sends it when it is awaited. Drizzle asks some for arrays of values. */
interface Statement extends PromiseLike<unknown> {
  values(): Statement;
}

/** The waits of one transaction, all failed together once one of them has waited too long. */
class TransactionWaits {
  failure: Error | null = null;
  private readonly waiters = new Set<(error: Error) => void>();

  constructor(private readonly timeoutMs: number) {}

  /** Calls `fail` should the transaction be abandoned before `stop` is called. */
  watch(fail: (error: Error) => void): () => void {
    this.waiters.add(fail);
    return () => this.waiters.delete(fail);
  }

  /** A timer that abandons the transaction when the wait for `what` lasts too long. */
  deadline(what: string): ReturnType<typeof setTimeout> {
    return setTimeout(() => this.abandon(new PgNoAnswerError(what, this.timeoutMs / 1000)), this.timeoutMs);
  }

  abandon(error: Error): void {
    this.failure ??= error;
    for (const fail of [...this.waiters]) fail(error);
  }
}

/**
 * `sql` with a deadline of `timeoutMs` on every wait for PostgreSQL, counting what it does in
 * `activity`. Only Drizzle's handle goes through it: migrations and `db copy` use the pool itself.
 */
export function guardPool(sql: BunSql, timeoutMs: number, activity: PoolActivity): object {
  return guardClient(sql as unknown as SqlClient, timeoutMs, activity, null);
}

function guardClient(
  client: SqlClient,
  timeoutMs: number,
  activity: PoolActivity,
  transaction: TransactionWaits | null,
): SqlClient {
  const guarded: SqlClient = {
    unsafe(query, params) {
      let statement = client.unsafe(query, params);
      let answer: Promise<unknown> | undefined;
      const run = () =>
        transaction
          ? awaitInTransaction(statement, transaction)
          : awaitStatement(statement, timeoutMs, activity);
      const lazy = {
        values() {
          statement = statement.values();
          return lazy;
        },
        // biome-ignore lint/suspicious/noThenProperty: a statement is sent when awaited, as Bun.sql's own.
        then<A, B>(
          onAnswer?: (rows: unknown) => A | PromiseLike<A>,
          onError?: (error: unknown) => B | PromiseLike<B>,
        ) {
          answer ??= run();
          return answer.then(onAnswer, onError);
        },
      };
      return lazy;
    },
    begin(work) {
      const waits = new TransactionWaits(timeoutMs);
      activity.waitingTransactions++;
      let isActive = false;
      // Counted until Bun.sql gives the connection back, also when the caller has stopped waiting.
      const released = () => {
        if (isActive) activity.activeTransactions--;
        else activity.waitingTransactions--;
      };
      return enclose(
        waits,
        "a connection and BEGIN",
        "COMMIT or ROLLBACK",
        (body) => {
          const ended = client.begin((tx) => {
            activity.waitingTransactions--;
            activity.activeTransactions++;
            isActive = true;
            return body(tx);
          });
          ended.then(released, released);
          return ended;
        },
        (tx) => work(guardClient(tx, timeoutMs, activity, waits)),
      );
    },
    savepoint(work) {
      if (!transaction) return client.savepoint(work);
      return enclose(
        transaction,
        "SAVEPOINT",
        "RELEASE or ROLLBACK TO SAVEPOINT",
        (body) => client.savepoint(body),
        (tx) => work(guardClient(tx, timeoutMs, activity, transaction)),
      );
    },
  };
  return guarded;
}

/** A statement outside a transaction: it alone fails when PostgreSQL does not answer. */
function awaitStatement(statement: Statement, timeoutMs: number, activity: PoolActivity): Promise<unknown> {
  activity.pendingStatements++;
  return new Promise<unknown>((resolve, reject) => {
    const timer = setTimeout(() => reject(new PgNoAnswerError("a statement", timeoutMs / 1000)), timeoutMs);
    // Counted until answered, also when the caller has stopped waiting: it still holds its connection.
    statement.then(
      (rows) => {
        clearTimeout(timer);
        activity.pendingStatements--;
        resolve(rows);
      },
      (error) => {
        clearTimeout(timer);
        activity.pendingStatements--;
        reject(error);
      },
    );
  });
}

/** A statement in a transaction: its wait, failed, abandons the whole transaction. */
function awaitInTransaction(statement: Statement, waits: TransactionWaits): Promise<unknown> {
  if (waits.failure) return Promise.reject(waits.failure);
  return new Promise<unknown>((resolve, reject) => {
    const stop = waits.watch(reject);
    const timer = waits.deadline("a statement");
    statement.then(
      (rows) => {
        clearTimeout(timer);
        stop();
        resolve(rows);
      },
      (error) => {
        clearTimeout(timer);
        stop();
        reject(error);
      },
    );
  });
}

/**
 * A transaction or savepoint opened by `open` around `body`: the wait for it to open and the wait for
 * it to end are each under the deadline; the body's own statements are too (awaitInTransaction). Once
 * abandoned, it fails at once, and a body that Bun.sql starts late throws before doing anything.
 */
function enclose<T>(
  waits: TransactionWaits,
  opening: string,
  ending: string,
  open: (body: (tx: SqlClient) => Promise<T>) => Promise<T>,
  body: (tx: SqlClient) => Promise<T>,
): Promise<T> {
  if (waits.failure) return Promise.reject(waits.failure);
  return new Promise<T>((resolve, reject) => {
    const stop = waits.watch(reject);
    let timer = waits.deadline(opening);
    open(async (tx) => {
      clearTimeout(timer);
      if (waits.failure) throw waits.failure;
      let result: T;
      try {
        result = await body(tx);
      } catch (error) {
        if (waits.failure) throw waits.failure;
        timer = waits.deadline(ending);
        throw error;
      }
      // A body that caught the failure of one of its statements still ends in a rollback.
      if (waits.failure) throw waits.failure;
      timer = waits.deadline(ending);
      return result;
    })
      .then(resolve, reject)
      .finally(() => {
        clearTimeout(timer);
        stop();
      });
  });
}
