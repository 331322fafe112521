import { and, eq } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { webhookDeliveries, webhookDeliveryAttempts, webhooks } from "../../db/tables";
import { addSeconds, toIso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import { recordAudit } from "../audit/record-audit";
import { type DomainDeps, systemActor } from "../deps";
import type { ClaimedDelivery } from "./claim-delivery";
import { originOf } from "./webhook-input";

/** What one HTTP attempt gave: a status code, or an error (timeout, refused target, network). */
export interface AttemptOutcome {
  startedAt: Date;
  durationMs: number;
  statusCode: number | null;
  error: string | null;
}

/** Where the delivery stands after the attempt; "discarded" when its subscription was deleted meanwhile. */
export type DeliveryProgress = "succeeded" | "retrying" | "failed" | "discarded";

/** Each retry waits its scheduled delay plus up to this fraction more, so retries do not arrive in bursts. */
const RETRY_JITTER = 0.1;

export const GONE_REASON = "receiver answered 410 Gone";

/**
 * Logs an attempt and moves its delivery on: a 2xx succeeds; a 410 fails it and disables the
 * subscription; anything else is retried after the next delay of webhooks.retry_schedule_seconds, and
 * fails once the schedule is used up.
 */
export async function recordDeliveryAttempt(
  deps: DomainDeps,
  delivery: ClaimedDelivery,
  outcome: AttemptOutcome,
  random: () => number = Math.random,
): Promise<DeliveryProgress> {
  const now = deps.clock.now();
  const timestamp = toIso(now);
  return await withTransaction(deps.db, async (tx) => {
    const current = await firstRow(
      tx.select().from(webhookDeliveries).where(eq(webhookDeliveries.id, delivery.id)),
    );
    if (current?.status !== "pending") return "discarded";
    const attempt = current.attempts + 1;
    await tx.insert(webhookDeliveryAttempts).values({
      id: newId(),
      deliveryId: delivery.id,
      attempt,
      statusCode: outcome.statusCode,
      durationMs: outcome.durationMs,
      error: outcome.error,
      startedAt: toIso(outcome.startedAt),
    });
    const schedule = deps.config.webhooks.retry_schedule_seconds;
    const code = outcome.statusCode;
    const isSuccess = code !== null && code >= 200 && code < 300;
    const isGone = code === 410;
    const delaySeconds = schedule[attempt - 1];
    const retryAt =
      isSuccess || isGone || delaySeconds === undefined
        ? null
        : toIso(addSeconds(now, delaySeconds * (1 + RETRY_JITTER * random())));
    const progress: DeliveryProgress = isSuccess ? "succeeded" : retryAt ? "retrying" : "failed";
    await tx
      .update(webhookDeliveries)
      .set({
        status: progress === "retrying" ? "pending" : progress,
        attempts: attempt,
        nextAttemptAt: retryAt,
        lastStatusCode: outcome.statusCode,
        lastError: outcome.error,
        lastDurationMs: outcome.durationMs,
        updatedAt: timestamp,
        completedAt: progress === "retrying" ? null : timestamp,
      })
      .where(eq(webhookDeliveries.id, delivery.id));
    if (isGone) {
      const disabled = await tx
        .update(webhooks)
        .set({ isActive: false, disabledReason: GONE_REASON, updatedAt: timestamp })
        .where(and(eq(webhooks.id, delivery.webhookId), eq(webhooks.isActive, true)))
        .returning({ id: webhooks.id });
      if (disabled.length > 0) {
        await recordAudit(tx, now, systemActor(delivery.organizationId), {
          action: "webhook.disable",
          targetType: "webhook",
          targetId: delivery.webhookId,
          details: { reason: GONE_REASON, delivery_id: delivery.id, target: originOf(delivery.url) },
        });
      }
    }
    return progress;
  });
}
