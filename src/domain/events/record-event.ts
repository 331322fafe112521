import { and, eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { events, webhookDeliveries, webhooks } from "../../db/schema";
import { toIso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import type { EventData } from "./event-payloads";
import type { EventType } from "./event-types";

export interface RecordedEvent {
  id: string;
  sequence: number;
  type: EventType;
  createdAt: string;
}

/**
 * Appends an event to the outbox and fans it out to the organization's webhook subscriptions that are
 * active now and listen for it, all inside the caller's transaction: if the change commits, so does
 * every delivery row; if it rolls back, nothing is sent.
 */
export function recordEvent<T extends EventType>(
  tx: DbOrTx,
  now: Date,
  organizationId: string,
  type: T,
  data: EventData<T>,
): RecordedEvent {
  const event = insertEvent(tx, now, organizationId, type, data);
  const subscriptions = tx
    .select({ id: webhooks.id, events: webhooks.events })
    .from(webhooks)
    .where(and(eq(webhooks.organizationId, organizationId), eq(webhooks.isActive, true)))
    .all();
  for (const subscription of subscriptions) {
    if (!subscription.events.includes("*") && !subscription.events.includes(type)) continue;
    insertPendingDelivery(tx, subscription.id, event);
  }
  return event;
}

/** Appends an event to the outbox without fanning it out (the caller chooses its deliveries). */
export function insertEvent<T extends EventType>(
  tx: DbOrTx,
  now: Date,
  organizationId: string,
  type: T,
  data: EventData<T>,
): RecordedEvent {
  const id = newId();
  const createdAt = toIso(now);
  const inserted = tx
    .insert(events)
    .values({ id, organizationId, type, data, createdAt })
    .returning({ sequence: events.sequence })
    .get();
  return { id, sequence: inserted.sequence, type, createdAt };
}

/** Queues one delivery of `event` to a subscription, due at once; returns the delivery id. */
export function insertPendingDelivery(tx: DbOrTx, webhookId: string, event: RecordedEvent): string {
  const id = newId();
  tx.insert(webhookDeliveries)
    .values({
      id,
      webhookId,
      eventSequence: event.sequence,
      status: "pending",
      attempts: 0,
      nextAttemptAt: event.createdAt,
      createdAt: event.createdAt,
      updatedAt: event.createdAt,
    })
    .run();
  return id;
}
