import type { DbOrTx } from "../../db/client";
import { deviceLogs } from "../../db/schema";
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
  | "certificate.renewed";

/** Appends one entry to a device's activity log, in the caller's transaction. */
export function appendDeviceLog(
  tx: DbOrTx,
  now: Date,
  deviceId: string,
  event: DeviceLogEvent,
  details: Record<string, unknown>,
): void {
  tx.insert(deviceLogs)
    .values({ id: newId(), deviceId, event, details, createdAt: toIso(now) })
    .run();
}
