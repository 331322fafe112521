import { statSync } from "node:fs";
import { and, count, eq, lte, min, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { type Db, readTogether } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { deviceCounts, webhookDeliveries, webhooks } from "../../db/schema";
import { COMPLIANCE_STATUSES, DEVICE_STATUSES } from "../../db/schema/enums";
import { unplanned } from "../../db/sqlite/prepared";
import { toIso } from "../../lib/clock";
import type { DomainDeps } from "../deps";

/** The outbox as an operator watches it. */
export interface OutboxState {
  /** Deliveries not yet delivered or given up, including those waiting for a retry. */
  pending: number;
  /**
   * Subscriptions whose next delivery (the oldest pending one: a subscription's deliveries go out in
   * order) is due now: what the dispatcher should be sending. Deliveries queued behind one that waits
   * for its retry are not due.
   */
  due: number;
  /** Age of the oldest pending delivery; 0 when there is none. */
  oldestPendingAgeSeconds: number;
  /** How long the most overdue of those has been due; grows only when nothing is sending. */
  oldestDueWaitSeconds: number;
}

/** Everything the metrics' gauges show, read in one go at scrape time. */
export interface OperationalSnapshot {
  devices: { status: string; compliance: string; count: number }[];
  outbox: OutboxState;
  databaseBytes: { main: number; wal: number };
}

const secondsSince = (now: Date, iso: string | null) =>
  iso === null ? 0 : Math.max(0, Math.floor((now.getTime() - Date.parse(iso)) / 1000));

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

/** The webhook outbox: backlog, due deliveries and how long the oldest have waited. */
export function outboxState(deps: DomainDeps): OutboxState {
  const now = deps.clock.now();
  let queries = outboxQueries.get(deps.db);
  if (!queries) {
    queries = prepareOutboxQueries(deps.db);
    outboxQueries.set(deps.db, queries);
  }
  const { pending: pendingQuery, due: dueQuery } = queries;
  // One read transaction for both: one WAL read lock, and counts from one snapshot.
  const [pending, due] = readTogether(deps.db, () => [pendingQuery.get(), dueQuery.get({ now: toIso(now) })]);
  return {
    pending: pending?.count ?? 0,
    due: due?.count ?? 0,
    oldestPendingAgeSeconds: secondsSince(now, pending?.oldest ?? null),
    oldestDueWaitSeconds: secondsSince(now, due?.oldest ?? null),
  };
}

/** Bytes of a file, 0 when it does not exist (no WAL yet, an in-memory database). */
function fileBytes(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}

/**
 * Devices by status and compliance (every combination, zeros included, so an alert on a series that
 * drops to zero still sees it), the outbox, and the database's size on disk.
 */
export async function operationalSnapshot(deps: DomainDeps): Promise<OperationalSnapshot> {
  // The counts triggers keep (device_counts), not a scan of the devices at every scrape.
  const counted = await deps.db
    .select({
      status: deviceCounts.status,
      compliance: deviceCounts.complianceStatus,
      count: sql<number>`sum(${deviceCounts.count})`,
    })
    .from(deviceCounts)
    .groupBy(deviceCounts.status, deviceCounts.complianceStatus);
  const byStatus = DEVICE_STATUSES.flatMap((status) =>
    COMPLIANCE_STATUSES.map((compliance) => ({
      status,
      compliance,
      count: counted.find((row) => row.status === status && row.compliance === compliance)?.count ?? 0,
    })),
  );
  const path = deps.config.database.path;
  const page = await firstRow(
    deps.db
      .select({ bytes: sql<number>`page_count * page_size` })
      .from(sql`pragma_page_count(), pragma_page_size()`),
  );
  return {
    devices: byStatus,
    outbox: outboxState(deps),
    databaseBytes: {
      main: path === ":memory:" ? (page?.bytes ?? 0) : fileBytes(path),
      wal: path === ":memory:" ? 0 : fileBytes(`${path}-wal`),
    },
  };
}
