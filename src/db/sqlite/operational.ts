/** What the health check and the metrics read of the database itself, on SQLite. */
import { and, count, eq, lte, min, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { connectionOf, type Db, type DbOrTx, readTogether } from "../client";
import { webhookDeliveries, webhooks } from "../schema";
import { unplanned } from "./prepared";

/** Runs a trivial query: one constant statement, prepared once. Throws when the database cannot answer. */
export function pingDatabase(db: DbOrTx): void {
  connectionOf(db).prepare("SELECT 1").get();
}

/**
 * The outbox's two queries, prepared once per database: the health check runs them on every probe, and
 * building their SQL text each time cost more than running them. Their values are compared as
 * expressions (`unplanned`): SQLite as Bun ships it plans a join with bare bound values again at every
 * execution, which made a probe cost ~150 µs with an empty outbox.
 */
function prepareOutboxQueries(db: Db) {
  const pending = db
    .select({ count: count(), oldest: min(webhookDeliveries.createdAt) })
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.status, unplanned("pending")))
    .prepare();
  const queued = alias(webhookDeliveries, "queued");
  const headOfQueue = db
    .select({ sequence: min(queued.eventSequence) })
    .from(queued)
    .where(and(eq(queued.webhookId, webhookDeliveries.webhookId), eq(queued.status, unplanned("pending"))));
  const due = db
    .select({ count: count(), oldest: min(webhookDeliveries.nextAttemptAt) })
    .from(webhookDeliveries)
    .innerJoin(webhooks, eq(webhooks.id, webhookDeliveries.webhookId))
    .where(
      and(
        eq(webhookDeliveries.status, unplanned("pending")),
        eq(webhooks.isActive, unplanned(true)),
        lte(webhookDeliveries.nextAttemptAt, unplanned(sql.placeholder("now"))),
        eq(webhookDeliveries.eventSequence, headOfQueue),
      ),
    )
    .prepare();
  return { pending, due };
}

const outboxQueries = new WeakMap<Db, ReturnType<typeof prepareOutboxQueries>>();

/**
 * The outbox's backlog (pending deliveries and the oldest one's creation) and what is due at `now` (the
 * subscriptions' heads of queue and the most overdue one), from one snapshot.
 */
export function countOutbox(db: Db, now: string) {
  let queries = outboxQueries.get(db);
  if (!queries) {
    queries = prepareOutboxQueries(db);
    outboxQueries.set(db, queries);
  }
  const { pending: pendingQuery, due: dueQuery } = queries;
  // One read transaction for both: one WAL read lock, and counts from one snapshot.
  const [pending, due] = readTogether(db, () => [pendingQuery.get(), dueQuery.get({ now })]);
  return { pending, due };
}

/** The bytes of the database's pages: the size of a database that has no file. */
export function databaseBytesInMemory(db: DbOrTx): number {
  return (
    connectionOf(db)
      .prepare<{ bytes: number }, []>(
        "SELECT page_count * page_size AS bytes FROM pragma_page_count(), pragma_page_size()",
      )
      .get()?.bytes ?? 0
  );
}
