import { eq } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { selectPendingWipes } from "../../db/lookups";
import { devices } from "../../db/tables";
import { recordAudit } from "../audit/record-audit";
import type { Actor, DomainDeps } from "../deps";
import { ConflictError, UnauthenticatedError } from "../errors";
import { recordEvent } from "../events/record-event";
import type { DevicePrincipal } from "./authenticate-device";
import { deviceEventData } from "./device-views";
import { removeDeviceWithCredentials } from "./retire-device";

/**
 * The device leaves the server on its own (`bulwark agent unenroll`): as a retirement, its device
 * token and certificates stop working at once, its VPN peer and address go, its hardware_id may enroll
 * again, and its record, logs and wipes go with it; the audit entry (`device.unenroll`, the device as
 * actor) and the `device.unenrolled` event keep what it was. Refused (409) while a wipe waits for it
 * (`wipe_pending`: carry it out first) or while it is suspended (`device_suspended`: an administrator
 * holds it; they may retire it).
 */
export async function unenrollDevice(deps: DomainDeps, actor: Actor, caller: DevicePrincipal): Promise<void> {
  const now = deps.clock.now();
  await withTransaction(deps.db, async (tx) => {
    const device = await firstRow(tx.select().from(devices).where(eq(devices.id, caller.deviceId)));
    // Removed since its credential was checked (a concurrent unenroll or retirement).
    if (!device) throw new UnauthenticatedError("device_token_invalid", "invalid device token");
    const pendingWipe = await firstRow(selectPendingWipes(tx, device.id));
    if (pendingWipe)
      throw new ConflictError(
        "wipe_pending",
        "a wipe is pending",
        `carry out wipe ${pendingWipe.id} and report it (POST /api/v1/agent/wipes/${pendingWipe.id}/complete)`,
      );
    if (device.status === "suspended")
      throw new ConflictError(
        "device_suspended",
        "device is suspended",
        "a suspended device cannot leave on its own; an administrator may retire it",
      );
    const removed = await removeDeviceWithCredentials(tx, device);
    await recordEvent(
      tx,
      now,
      device.organizationId,
      "device.unenrolled",
      deviceEventData(device, { previous_status: device.status }),
    );
    await recordAudit(tx, now, actor, {
      action: "device.unenroll",
      targetType: "device",
      targetId: device.id,
      details: {
        device_name: device.deviceName,
        hardware_id: device.hardwareId,
        previous_status: device.status,
        ...removed,
      },
    });
  });
}
