import { type Static, Type } from "@sinclair/typebox";
import { and, asc, count, desc, eq, inArray, type SQL } from "drizzle-orm";
import { firstRow } from "../../db/first-row";
import { events, webhookDeliveries, webhookDeliveryAttempts } from "../../db/tables";
import { NullableTimestamp, Timestamp, Uuid } from "../../lib/schema-types";
import type { DomainDeps } from "../deps";
import { type DeliveryStatus, DeliveryStatusSchema, findWebhook } from "./webhook-view";

/** One event's delivery to one subscription, with every attempt made so far. */
export const DeliverySchema = Type.Object(
  {
    id: Uuid,
    event_id: Uuid,
    event: Type.String(),
    status: DeliveryStatusSchema,
    attempts: Type.Integer({ minimum: 0 }),
    next_attempt_at: Type.Union([Timestamp, Type.Null()], {
      description: "When the next attempt is due (pending only)",
    }),
    last_status_code: Type.Union([Type.Integer(), Type.Null()]),
    last_error: Type.Union([Type.String(), Type.Null()]),
    last_duration_ms: Type.Union([Type.Integer(), Type.Null()]),
    created_at: Timestamp,
    completed_at: NullableTimestamp,
    attempts_log: Type.Array(
      Type.Object({
        attempt: Type.Integer({ minimum: 1 }),
        status_code: Type.Union([Type.Integer(), Type.Null()]),
        duration_ms: Type.Integer({ minimum: 0 }),
        error: Type.Union([Type.String(), Type.Null()]),
        started_at: Timestamp,
      }),
      { description: "Every attempt, oldest first" },
    ),
  },
  { title: "WebhookDelivery" },
);

export type DeliveryView = Static<typeof DeliverySchema>;
/** One HTTP attempt of a delivery. */
export type DeliveryAttemptView = DeliveryView["attempts_log"][number];

/** A subscription's deliveries, newest event first, optionally of one status. */
export async function listDeliveries(
  deps: DomainDeps,
  organizationId: string,
  webhookId: string,
  filter: { status?: DeliveryStatus },
  page: { page: number; pageSize: number },
): Promise<{ data: DeliveryView[]; total: number }> {
  await findWebhook(deps.db, organizationId, webhookId);
  const conditions: SQL[] = [eq(webhookDeliveries.webhookId, webhookId)];
  if (filter.status) conditions.push(eq(webhookDeliveries.status, filter.status));
  const where = and(...conditions);
  const rows = await deps.db
    .select({ delivery: webhookDeliveries, eventId: events.id, eventType: events.type })
    .from(webhookDeliveries)
    .innerJoin(events, eq(events.sequence, webhookDeliveries.eventSequence))
    .where(where)
    .orderBy(desc(webhookDeliveries.eventSequence))
    .limit(page.pageSize)
    .offset((page.page - 1) * page.pageSize);
  const total =
    (await firstRow(deps.db.select({ value: count() }).from(webhookDeliveries).where(where)))?.value ?? 0;
  const attemptsByDelivery = new Map<string, DeliveryAttemptView[]>();
  const deliveryIds = rows.map((row) => row.delivery.id);
  if (deliveryIds.length > 0) {
    const attempts = await deps.db
      .select()
      .from(webhookDeliveryAttempts)
      .where(inArray(webhookDeliveryAttempts.deliveryId, deliveryIds))
      .orderBy(asc(webhookDeliveryAttempts.attempt));
    for (const attempt of attempts) {
      const log = attemptsByDelivery.get(attempt.deliveryId) ?? [];
      log.push({
        attempt: attempt.attempt,
        status_code: attempt.statusCode,
        duration_ms: attempt.durationMs,
        error: attempt.error,
        started_at: attempt.startedAt,
      });
      attemptsByDelivery.set(attempt.deliveryId, log);
    }
  }
  return {
    total,
    data: rows.map(({ delivery, eventId, eventType }) => ({
      id: delivery.id,
      event_id: eventId,
      event: eventType,
      status: delivery.status,
      attempts: delivery.attempts,
      next_attempt_at: delivery.status === "pending" ? delivery.nextAttemptAt : null,
      last_status_code: delivery.lastStatusCode,
      last_error: delivery.lastError,
      last_duration_ms: delivery.lastDurationMs,
      created_at: delivery.createdAt,
      completed_at: delivery.completedAt,
      attempts_log: attemptsByDelivery.get(delivery.id) ?? [],
    })),
  };
}
