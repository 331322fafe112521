/**
 * The outbox and the device activity log, on SQLite: constant SQL texts prepared once per connection
 * (its statement cache), since jobs write an event and a log entry per device. Each runs in the
 * transaction of the handle it is given.
 */
import { connectionOf, type DbOrTx } from "../client";

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

/** Inserts an event (data as JSON text); returns its sequence. */
export function insertEventRow(
  tx: DbOrTx,
  row: { id: string; organizationId: string; type: string; data: string; createdAt: string },
): number {
  const inserted = connectionOf(tx)
    .prepare<{ sequence: number }, [Record<string, string>]>(INSERT_EVENT)
    .get(row);
  if (!inserted) throw new Error("INSERT ... RETURNING gave no row");
  return inserted.sequence;
}

/** The organization's active webhooks that listen for `type` (or for every event). */
export function selectSubscribedWebhooks(tx: DbOrTx, organizationId: string, type: string): { id: string }[] {
  return connectionOf(tx)
    .prepare<{ id: string }, [{ organizationId: string; type: string }]>(SUBSCRIBED_WEBHOOKS)
    .all({ organizationId, type });
}

/** Queues a delivery, due at once. */
export function insertDeliveryRow(
  tx: DbOrTx,
  row: { id: string; webhookId: string; eventSequence: number; createdAt: string },
): void {
  connectionOf(tx).prepare(INSERT_DELIVERY).run(row);
}

// One constant text: prepared once (the connection's statement cache), never built per entry. The user
// is found through a scalar subquery, not a join: SQLite as Bun ships it prepares a join that binds a
// parameter again at every execution (see authenticate.ts).
const INSERT_LOG = `
  INSERT INTO device_logs (id, device_id, event, details, created_at)
  SELECT $id, $deviceId, $event,
    CASE WHEN EXISTS (
      SELECT 1 FROM users u
      WHERE u.id = (SELECT d.user_id FROM devices d WHERE d.id = $deviceId)
        AND (u.is_restricted = 1 OR u.device_activity_objected_at IS NOT NULL)
    ) THEN '{}' ELSE $details END,
    $createdAt`;

/** Appends a device log entry; its details are dropped when the device's user objected or is restricted. */
export function insertDeviceLogRow(
  tx: DbOrTx,
  row: { id: string; deviceId: string; event: string; details: string; createdAt: string },
): void {
  connectionOf(tx).prepare(INSERT_LOG).run(row);
}
