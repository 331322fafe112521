import { and, asc, eq, gte, isNull, lte, min, notInArray, or, sql } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { events, webhookDeliveries, webhooks } from "../../db/tables";
import { addSeconds, toIso } from "../../lib/clock";
import type { DomainDeps } from "../deps";

/** A delivery taken by the dispatcher for one attempt, with what the request needs. */
export interface ClaimedDelivery {
  id: string;
  webhookId: string;
  organizationId: string;
  url: string;
  /** As stored (sealed): opened where the request is signed, so a key problem fails only the attempt. */
  secret: string;
  eventSequence: number;
  event: { id: string; type: string; createdAt: string; data: Record<string, unknown> };
}

/** A subscription whose oldest pending delivery is due, and that delivery's event sequence. */
export interface DueSubscription {
  webhookId: string;
  organizationId: string;
  oldestSequence: number;
}

/**
 * Active subscriptions whose oldest pending delivery is due now, most overdue first. Only the oldest
 * counts, so one subscription's deliveries go out in event order; paused subscriptions are skipped.
 * `perOrganization` caps how many one organization contributes, counting the slots it already holds
 * (`heldByOrganization`), so one tenant's backlog can neither take every slot nor crowd the others out
 * of the candidate list.
 */
export async function findDueSubscriptions(
  deps: DomainDeps,
  options: {
    limit: number;
    excludedWebhookIds: string[];
    perOrganization?: number;
    heldByOrganization?: ReadonlyMap<string, number>;
  },
): Promise<DueSubscription[]> {
  const now = toIso(deps.clock.now());
  const oldestPending = deps.db
    .select({
      webhookId: webhookDeliveries.webhookId,
      oldestSequence: min(webhookDeliveries.eventSequence).as("oldest_sequence"),
    })
    .from(webhookDeliveries)
    .where(eq(webhookDeliveries.status, "pending"))
    .groupBy(webhookDeliveries.webhookId)
    .as("oldest_pending");
  const due = deps.db
    .select({
      webhookId: sql<string>`${oldestPending.webhookId}`.as("webhook_id"),
      organizationId: sql<string>`${webhooks.organizationId}`.as("organization_id"),
      oldestSequence: sql<number>`${oldestPending.oldestSequence}`.mapWith(Number).as("due_sequence"),
      nextAttemptAt: sql<string>`${webhookDeliveries.nextAttemptAt}`.as("due_at"),
      rank: sql<number>`row_number() over (partition by ${webhooks.organizationId} order by ${webhookDeliveries.nextAttemptAt})`
        .mapWith(Number)
        .as("organization_rank"),
    })
    .from(oldestPending)
    .innerJoin(
      webhookDeliveries,
      and(
        eq(webhookDeliveries.webhookId, oldestPending.webhookId),
        eq(webhookDeliveries.eventSequence, oldestPending.oldestSequence),
      ),
    )
    .innerJoin(webhooks, eq(webhooks.id, oldestPending.webhookId))
    .where(
      and(
        eq(webhooks.isActive, true),
        lte(webhookDeliveries.nextAttemptAt, now),
        options.excludedWebhookIds.length > 0
          ? notInArray(oldestPending.webhookId, options.excludedWebhookIds)
          : undefined,
      ),
    )
    .as("due");
  const rows = await deps.db
    .select({
      webhookId: due.webhookId,
      organizationId: due.organizationId,
      oldestSequence: due.oldestSequence,
      rank: due.rank,
    })
    .from(due)
    .orderBy(asc(due.nextAttemptAt));
  const perOrganization = options.perOrganization ?? Number.POSITIVE_INFINITY;
  return rows
    .filter(
      (row) =>
        row.oldestSequence !== null &&
        row.rank + (options.heldByOrganization?.get(row.organizationId) ?? 0) <= perOrganization,
    )
    .slice(0, options.limit)
    .map((row) => ({
      webhookId: row.webhookId,
      organizationId: row.organizationId,
      oldestSequence: row.oldestSequence,
    }));
}

/**
 * Takes the subscription's oldest pending delivery (from `fromSequence` on) if it is due, leasing it for
 * `leaseSeconds`: if the process dies during the attempt, the delivery becomes due again when the lease
 * ends and is retried with the same id. Returns null when nothing is due.
 */
export async function claimDelivery(
  deps: DomainDeps,
  webhookId: string,
  fromSequence: number,
  leaseSeconds: number,
): Promise<ClaimedDelivery | null> {
  const now = deps.clock.now();
  return await withTransaction(deps.db, async (tx) => {
    const next = await firstRow(
      tx
        .select({ delivery: webhookDeliveries, webhook: webhooks, event: events })
        .from(webhookDeliveries)
        .innerJoin(webhooks, eq(webhooks.id, webhookDeliveries.webhookId))
        .innerJoin(events, eq(events.sequence, webhookDeliveries.eventSequence))
        .where(
          and(
            eq(webhookDeliveries.webhookId, webhookId),
            eq(webhookDeliveries.status, "pending"),
            gte(webhookDeliveries.eventSequence, fromSequence),
          ),
        )
        .orderBy(asc(webhookDeliveries.eventSequence))
        .limit(1),
    );
    if (!next?.webhook.isActive) return null;
    if (next.delivery.nextAttemptAt !== null && next.delivery.nextAttemptAt > toIso(now)) return null;
    // A conditional write, so that of two dispatchers taking the same delivery at once (two processes
    // on one PostgreSQL database) one wins and the other finds it leased. Not FOR UPDATE SKIP LOCKED:
    // skipping a delivery another dispatcher holds would take the next one, out of event order.
    const leased = await tx
      .update(webhookDeliveries)
      .set({ nextAttemptAt: toIso(addSeconds(now, leaseSeconds)), updatedAt: toIso(now) })
      .where(
        and(
          eq(webhookDeliveries.id, next.delivery.id),
          eq(webhookDeliveries.status, "pending"),
          or(isNull(webhookDeliveries.nextAttemptAt), lte(webhookDeliveries.nextAttemptAt, toIso(now))),
        ),
      )
      .returning({ id: webhookDeliveries.id });
    if (leased.length === 0) return null;
    return {
      id: next.delivery.id,
      webhookId,
      organizationId: next.webhook.organizationId,
      url: next.webhook.url,
      secret: next.webhook.secret,
      eventSequence: next.delivery.eventSequence,
      event: {
        id: next.event.id,
        type: next.event.type,
        createdAt: next.event.createdAt,
        data: next.event.data,
      },
    };
  });
}
