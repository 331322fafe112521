import { and, eq, inArray, lt, notExists } from "drizzle-orm";
import { type DbOrTx, withTransaction } from "../../db/client";
import { events, webhookDeliveries } from "../../db/tables";
import { addSeconds, toIso } from "../../lib/clock";
import type { DomainDeps } from "../deps";

/**
 * Deletes deliveries that succeeded or failed more than webhooks.retention_days ago (their attempts go
 * with them), then outbox events that old with no delivery left. Pending deliveries are never purged.
 */
export async function purgeDeliveries(deps: DomainDeps): Promise<{ deliveries: number; events: number }> {
  const cutoff = toIso(addSeconds(deps.clock.now(), -deps.config.webhooks.retention_days * 86400));
  return await withTransaction(deps.db, async (tx) => {
    const deliveries = await tx
      .delete(webhookDeliveries)
      .where(
        and(
          inArray(webhookDeliveries.status, ["succeeded", "failed"]),
          lt(webhookDeliveries.completedAt, cutoff),
        ),
      )
      .returning({ id: webhookDeliveries.id });
    const purgedEvents = await deleteExpiredEvents(tx, cutoff);
    return { deliveries: deliveries.length, events: purgedEvents.length };
  });
}

/**
 * Outbox events older than `cutoff` with no delivery left. Both sides are read from an index (created_at;
 * event_sequence), so the purge that runs every minute reads what it deletes, not the whole outbox.
 */
export function deleteExpiredEvents(tx: DbOrTx, cutoff: string) {
  return tx
    .delete(events)
    .where(
      and(
        lt(events.createdAt, cutoff),
        notExists(
          tx
            .select({ id: webhookDeliveries.id })
            .from(webhookDeliveries)
            .where(eq(webhookDeliveries.eventSequence, events.sequence)),
        ),
      ),
    )
    .returning({ sequence: events.sequence });
}
