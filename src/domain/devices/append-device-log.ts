import type { DbOrTx } from "../../db/client";
import { insertDeviceLogRow } from "../../db/lookups";
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
  | "device.vpn_readdressed"
  | "device.profile_fetched"
  | "device.vpn_key_replaced"
  | "device.vpn_handshake";

/**
 * Appends one entry to a device's activity log, in the caller's transaction. When the device's user has
 * objected to the processing of their device activity, or their processing is restricted (GDPR), the
 * entry keeps its event and time and the details are not stored: one statement decides, so the hot
 * check-in path pays no extra round trip.
 */
export async function appendDeviceLog(
  tx: DbOrTx,
  now: Date,
  deviceId: string,
  event: DeviceLogEvent,
  details: Record<string, unknown>,
): Promise<void> {
  await insertDeviceLogRow(tx, {
    id: newId(),
    deviceId,
    event,
    details: JSON.stringify(details),
    createdAt: toIso(now),
  });
}
