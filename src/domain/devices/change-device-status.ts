import { eq } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { devices } from "../../db/tables";
import { addSeconds, toIso } from "../../lib/clock";
import { recordAudit } from "../audit/record-audit";
import type { Actor, DomainDeps } from "../deps";
import { ConflictError, ValidationError } from "../errors";
import { recordEvent } from "../events/record-event";
import { revokeDeviceCertificates } from "../pki/device-certificates";
import { appendDeviceLog } from "./append-device-log";
import { type DeviceStatus, deviceEventData, findDevice } from "./device-views";
import { findPhoneEnrollment } from "./phone-enrollment";

/** The statuses an administrator may set: `suspended`, or `online` (alias `active`) to unsuspend. */
export type StatusTarget = "suspended" | "online" | "active";

/** The answer to a status change. */
export interface StatusChange {
  id: string;
  status: DeviceStatus;
  previous_status: DeviceStatus;
  reason: string | null;
  updated_at: string;
}

/**
 * Suspends (a reason is required) or unsuspends a device; an unsuspended device is online when it
 * checked in within `devices.offline_after_seconds`, else offline. 409 for a wiped device, suspending
 * a suspended one, or unsuspending one that is not suspended.
 */
export async function changeDeviceStatus(
  deps: DomainDeps,
  actor: Actor,
  organizationId: string,
  deviceId: string,
  input: { status: StatusTarget; reason?: string },
): Promise<StatusChange> {
  const isSuspending = input.status === "suspended";
  const reason = input.reason?.trim() || null;
  if (isSuspending && reason === null) {
    throw new ValidationError("invalid request body", [
      { field: "reason", message: "is required to suspend a device" },
    ]);
  }
  const now = deps.clock.now();
  const timestamp = toIso(now);
  return await withTransaction(deps.db, async (tx) => {
    const device = await findDevice(tx, organizationId, deviceId);
    if (device.status === "wiped")
      throw new ConflictError("device_wiped", "device has been wiped", "its status is final");
    if (isSuspending && device.status === "suspended") {
      throw new ConflictError("device_already_suspended", "device is already suspended");
    }
    if (!isSuspending && device.status !== "suspended") {
      throw new ConflictError(
        "device_not_suspended",
        "device is not suspended",
        `its status is ${device.status}`,
      );
    }
    const onlineSince = toIso(addSeconds(now, -deps.config.devices.offline_after_seconds));
    // A phone without an agent never checks in: it goes back to pending rather than claim to be online.
    const status: DeviceStatus = isSuspending
      ? "suspended"
      : (await findPhoneEnrollment(tx, device.id))
        ? "pending"
        : device.lastSeen >= onlineSince
          ? "online"
          : "offline";
    await tx
      .update(devices)
      .set({ status, suspendedReason: isSuspending ? reason : null, updatedAt: timestamp })
      .where(eq(devices.id, device.id));
    const event = isSuspending ? "device.suspended" : "device.unsuspended";
    // A suspended device's certificate dies with the suspension; once unsuspended, the agent renews it
    // with its device token (POST /agent/certificate).
    const revokedCertificates = isSuspending
      ? await revokeDeviceCertificates(tx, now, device.id, "suspended")
      : 0;
    const details =
      isSuspending && reason
        ? { reason, ...(revokedCertificates > 0 ? { certificates_revoked: revokedCertificates } : {}) }
        : { status, previous_reason: device.suspendedReason };
    await appendDeviceLog(tx, now, device.id, event, details);
    if (isSuspending && reason)
      await recordEvent(tx, now, organizationId, "device.suspended", deviceEventData(device, { reason }));
    else
      await recordEvent(
        tx,
        now,
        organizationId,
        "device.unsuspended",
        deviceEventData(device, { status, previous_reason: device.suspendedReason }),
      );
    await recordAudit(tx, now, actor, {
      action: isSuspending ? "device.suspend" : "device.unsuspend",
      targetType: "device",
      targetId: device.id,
      details,
    });
    return {
      id: device.id,
      status,
      previous_status: device.status,
      reason: isSuspending ? reason : null,
      updated_at: timestamp,
    };
  });
}
