import { connectionOf, type DbOrTx } from "../../db/client";
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
 * Jobs record an event per device (600k devices going offline are 600k events), so the three statements
 * are constant texts prepared once through the connection's statement cache, never built per event.
 */
export function recordEvent<T extends EventType>(
  tx: DbOrTx,
  now: Date,
  organizationId: string,
  type: T,
  data: EventData<T>,
): RecordedEvent {
  const event = insertEvent(tx, now, organizationId, type, data);
  const subscriptions = connectionOf(tx)
    .prepare<{ id: string }, [{ organizationId: string; type: string }]>(SUBSCRIBED_WEBHOOKS)
    .all({ organizationId, type });
  for (const subscription of subscriptions) insertPendingDelivery(tx, subscription.id, event);
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
  const inserted = connectionOf(tx)
    .prepare<{ sequence: number }, [Record<string, string>]>(INSERT_EVENT)
    .get({ id, organizationId, type, data: JSON.stringify(data), createdAt });
  if (!inserted) throw new Error("INSERT ... RETURNING gave no row");
  return { id, sequence: inserted.sequence, type, createdAt };
}

/** Queues one delivery of `event` to a subscription, due at once; returns the delivery id. */
export function insertPendingDelivery(tx: DbOrTx, webhookId: string, event: RecordedEvent): string {
  const id = newId();
  connectionOf(tx)
    .prepare(INSERT_DELIVERY)
    .run({ id, webhookId, eventSequence: event.sequence, createdAt: event.createdAt });
  return id;
}

const INSERT_EVENT = `
  INSERT INTO events (id, organization_id, type, data, created_at)
  VALUES ($id, $organizationId, $type, $data, $createdAt)
  RETURNING sequence`;

// webhooks.events is a JSON array of event types, "*" for all of them.
const SUBSCRIBED_WEBHOOKS = `
  SELECT w.id FROM webhooks w
  WHERE w.organization_id = $organizationId AND w.is_active = 1
    AND EXISTS (SELECT 1 FROM json_each(w.events) e WHERE e.value IN ('*', $type))`;

const INSERT_DELIVERY = `
  INSERT INTO webhook_deliveries
    (id, webhook_id, event_sequence, status, attempts, next_attempt_at, created_at, updated_at)
  VALUES ($id, $webhookId, $eventSequence, 'pending', 0, $createdAt, $createdAt, $createdAt)`;
