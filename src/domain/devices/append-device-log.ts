import { connectionOf, type DbOrTx } from "../../db/client";
import { toIso } from "../../lib/clock";
import { newId } from "../../lib/ids";

/** The entries of a device's activity log. */
export type DeviceLogEvent =
  | "device.enrolled"
  | "device.checkin"
  | "policy.applied"
  | "policy.assigned"
  | "device.suspended"
  | "device.unsuspended"
  | "device.offline"
  | "device.compliance_changed"
  | "wipe.requested"
  | "wipe.completed"
  | "wipe.failed"
  | "wipe.timed_out"
  | "certificate.renewed"
  | "device.updated"
  | "device.vpn_readdressed";

/**
 * Appends one entry to a device's activity log, in the caller's transaction. When the device's user has
 * objected to the processing of their device activity, or their processing is restricted (GDPR), the
 * entry keeps its event and time and the details are not stored: one statement decides, so the hot
 * check-in path pays no extra round trip.
 */
export function appendDeviceLog(
  tx: DbOrTx,
  now: Date,
  deviceId: string,
  event: DeviceLogEvent,
  details: Record<string, unknown>,
): void {
  connectionOf(tx)
    .prepare(INSERT_LOG)
    .run({ id: newId(), deviceId, event, details: JSON.stringify(details), createdAt: toIso(now) });
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
