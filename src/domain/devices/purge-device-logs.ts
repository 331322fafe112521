import { lt, sql } from "drizzle-orm";
import { type DbOrTx, withTransaction } from "../../db/client";
import { deviceLogs } from "../../db/tables";
import { addSeconds, toIso } from "../../lib/clock";
import type { DomainDeps } from "../deps";

/** Log entries deleted per transaction, so a large purge never holds the write lock for long. */
export const DEVICE_LOG_PURGE_BATCH_SIZE = 5000;

/** The rowids of up to `limit` log entries written before `cutoff`, read from device_logs_created_idx. */
export function selectExpiredDeviceLogs(db: DbOrTx, cutoff: string, limit: number) {
  return db
    .select({ rowid: sql`rowid` })
    .from(deviceLogs)
    .where(lt(deviceLogs.createdAt, cutoff))
    .limit(limit);
}

/**
 * Deletes device log entries older than devices.log_retention_days, oldest first, batch after batch
 * (over the created_at index), yielding to the event loop between batches. Returns how many went.
 */
export async function purgeDeviceLogs(deps: DomainDeps): Promise<number> {
  const retentionSeconds = deps.config.devices.log_retention_days * 86400;
  const cutoff = toIso(addSeconds(deps.clock.now(), -retentionSeconds));
  let total = 0;
  for (;;) {
    const purged = await withTransaction(deps.db, async (tx) => {
      const expired = selectExpiredDeviceLogs(tx, cutoff, DEVICE_LOG_PURGE_BATCH_SIZE);
      return (await tx.delete(deviceLogs).where(sql`rowid IN ${expired}`).returning({ id: deviceLogs.id }))
        .length;
    });
    total += purged;
    if (purged < DEVICE_LOG_PURGE_BATCH_SIZE) return total;
    await Bun.sleep(0);
  }
}
