import { eq, sql } from "drizzle-orm";
import { type DbOrTx, withTransaction } from "../../db/client";
import { devices, organizations } from "../../db/tables";
import { recordAudit } from "../audit/record-audit";
import type { Actor, DomainDeps } from "../deps";
import { ConflictError } from "../errors";
import { recordEvent } from "../events/record-event";
import { deviceEventData, findDevice } from "./device-views";

/**
 * Deletes a wiped device with its tokens, logs and wipes; its VPN address becomes free. 409 for a
 * device that has not been wiped.
 */
export async function deleteDevice(
  deps: DomainDeps,
  actor: Actor,
  organizationId: string,
  deviceId: string,
): Promise<void> {
  const now = deps.clock.now();
  await withTransaction(deps.db, async (tx) => {
    const device = await findDevice(tx, organizationId, deviceId);
    if (device.status !== "wiped") {
      throw new ConflictError(
        "device_not_wiped",
        "device must be wiped before deletion",
        `its status is ${device.status}; a device that will never confirm a wipe (lost, stolen, destroyed) is removed with POST /api/v1/devices/${device.id}/retire`,
      );
    }
    await removeDeviceRow(tx, organizationId, device.id);
    await recordEvent(tx, now, organizationId, "device.deleted", deviceEventData(device));
    await recordAudit(tx, now, actor, {
      action: "device.delete",
      targetType: "device",
      targetId: device.id,
      details: { device_name: device.deviceName, hardware_id: device.hardwareId },
    });
  });
}

/**
 * Removes a device's row, and with it (cascade) its tokens, certificates, logs and wipes; its VPN
 * address and hardware_id are free again. Keeps the organization's device count.
 */
export async function removeDeviceRow(tx: DbOrTx, organizationId: string, deviceId: string): Promise<void> {
  await tx.delete(devices).where(eq(devices.id, deviceId));
  await tx
    .update(organizations)
    .set({ deviceCount: sql`${organizations.deviceCount} - 1` })
    .where(eq(organizations.id, organizationId));
}
