import type { DbOrTx } from "../../db/client";
import { insertDeliveryRow, insertEventRow, selectSubscribedWebhooks } from "../../db/lookups";
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
 *
 * Jobs record an event per device (600k devices going offline are 600k events): the statements are
 * constant texts prepared once (src/db/sqlite/event-log.ts), never built per event.
 */
export async function recordEvent<T extends EventType>(
  tx: DbOrTx,
  now: Date,
  organizationId: string,
  type: T,
  data: EventData<T>,
): Promise<RecordedEvent> {
  const event = await insertEvent(tx, now, organizationId, type, data);
  const subscriptions = await selectSubscribedWebhooks(tx, organizationId, type);
  for (const subscription of subscriptions) await insertPendingDelivery(tx, subscription.id, event);
  return event;
}

/** Appends an event to the outbox without fanning it out (the caller chooses its deliveries). */
export async function insertEvent<T extends EventType>(
  tx: DbOrTx,
  now: Date,
  organizationId: string,
  type: T,
  data: EventData<T>,
): Promise<RecordedEvent> {
  const id = newId();
  const createdAt = toIso(now);
  const sequence = await insertEventRow(tx, {
    id,
    organizationId,
    type,
    data: JSON.stringify(data),
    createdAt,
  });
  return { id, sequence, type, createdAt };
}

/** Queues one delivery of `event` to a subscription, due at once; returns the delivery id. */
export async function insertPendingDelivery(
  tx: DbOrTx,
  webhookId: string,
  event: RecordedEvent,
): Promise<string> {
  const id = newId();
  await insertDeliveryRow(tx, { id, webhookId, eventSequence: event.sequence, createdAt: event.createdAt });
  return id;
}
