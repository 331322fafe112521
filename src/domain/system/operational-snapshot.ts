import { statSync } from "node:fs";
import { sql } from "drizzle-orm";
import { dialectOf } from "../../db/dialect";
import { countOutbox, databaseBytes } from "../../db/lookups";
import { COMPLIANCE_STATUSES, DEVICE_STATUSES } from "../../db/schema/enums";
import { deviceCounts } from "../../db/tables";
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

/** The webhook outbox: backlog, due deliveries and how long the oldest have waited. */
export async function outboxState(deps: DomainDeps): Promise<OutboxState> {
  const now = deps.clock.now();
  const { pending, due } = await countOutbox(deps.db, toIso(now));
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
      count: sql<number>`sum(${deviceCounts.count})`.mapWith(Number),
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
  // PostgreSQL's database (pg_database_size, its WAL being the cluster's), or SQLite's files.
  const hasFile = dialectOf(deps.db) === "sqlite" && path !== ":memory:";
  return {
    devices: byStatus,
    outbox: await outboxState(deps),
    databaseBytes: {
      main: hasFile ? fileBytes(path) : await databaseBytes(deps.db),
      wal: hasFile ? fileBytes(`${path}-wal`) : 0,
    },
  };
}
