import { eq } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { devices } from "../../db/tables";
import { toIso } from "../../lib/clock";
import { recordAudit } from "../audit/record-audit";
import type { Actor, DomainDeps } from "../deps";
import { ConflictError, NotFoundError, ValidationError } from "../errors";
import { recordEvent } from "../events/record-event";
import { findLiveUserId } from "../users/find-live-user-id";
import { appendDeviceLog } from "./append-device-log";
import { deviceEventData, findDevice } from "./device-views";

/** What PATCH /devices/:id may change; a field left out keeps its value. */
export interface DeviceChanges {
  deviceName?: string;
  /** A user of the device's organization, or null: nobody's device. */
  userId?: string | null;
}

/** One changed field, as the event and the audit entry show it. */
interface FieldChange {
  from: string | null;
  to: string | null;
}

/**
 * Renames a device or gives it to another user (or to nobody) after enrollment. The name is trimmed
 * and must not be blank; the user must be a live user of the device's organization (404
 * `user_not_found` otherwise). A wiped device keeps what it had (409 `device_wiped`). A change is
 * audited, logged on the device and sent as `device.updated`; a request that changes nothing writes
 * nothing.
 */
export async function updateDevice(
  deps: DomainDeps,
  actor: Actor,
  organizationId: string,
  deviceId: string,
  input: DeviceChanges,
): Promise<void> {
  if (input.deviceName === undefined && input.userId === undefined) {
    throw new ValidationError("invalid request body", [
      { field: "body", message: "must change device_name or user_id" },
    ]);
  }
  const deviceName = input.deviceName?.trim();
  if (deviceName === "") {
    throw new ValidationError("invalid request body", [
      { field: "device_name", message: "must not be blank", received: input.deviceName },
    ]);
  }
  const now = deps.clock.now();
  await withTransaction(deps.db, async (tx) => {
    const device = await findDevice(tx, organizationId, deviceId);
    if (device.status === "wiped")
      throw new ConflictError("device_wiped", "device has been wiped", "its status is final");
    let userId = input.userId;
    if (typeof userId === "string") {
      userId = await findLiveUserId(tx, organizationId, userId);
      if (!userId) throw new NotFoundError("user", `no user ${input.userId} in this organization`);
    }
    const changes: { device_name?: FieldChange; user_id?: FieldChange } = {};
    if (deviceName !== undefined && deviceName !== device.deviceName)
      changes.device_name = { from: device.deviceName, to: deviceName };
    if (userId !== undefined && userId !== device.userId)
      changes.user_id = { from: device.userId, to: userId };
    if (!changes.device_name && !changes.user_id) return;
    await tx
      .update(devices)
      .set({
        ...(changes.device_name ? { deviceName } : {}),
        ...(changes.user_id ? { userId } : {}),
        updatedAt: toIso(now),
      })
      .where(eq(devices.id, device.id));
    await appendDeviceLog(tx, now, device.id, "device.updated", changes);
    // The event names the device as it is called now.
    const renamed = { ...device, deviceName: changes.device_name?.to ?? device.deviceName };
    await recordEvent(tx, now, organizationId, "device.updated", deviceEventData(renamed, { changes }));
    await recordAudit(tx, now, actor, {
      action: "device.update",
      targetType: "device",
      targetId: device.id,
      details: changes,
    });
  });
}
