import { and, eq, isNull } from "drizzle-orm";
import { type DbOrTx, withTransaction } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { selectPendingWipes } from "../../db/lookups";
import { deviceCertificates, deviceTokens } from "../../db/tables";
import { toIso } from "../../lib/clock";
import { formatIpv4 } from "../../lib/ipv4";
import { recordAudit } from "../audit/record-audit";
import type { Actor, DomainDeps } from "../deps";
import { ConflictError } from "../errors";
import { recordEvent } from "../events/record-event";
import { removeDeviceRow } from "./delete-device";
import { type DeviceRow, deviceEventData, findDevice } from "./device-views";
import { requiredReason } from "./required-reason";

/** The answer to a retirement: what was removed with the device. */
export interface RetiredDevice {
  id: string;
  device_name: string;
  hardware_id: string;
  reason: string;
  retired_at: string;
  /** The wipe that was still waiting for the device, cancelled with it. */
  cancelled_wipe_id: string | null;
  /** The VPN address given back to the pool (the server's peer list drops the device at once). */
  released_vpn_ip: string | null;
  device_tokens_revoked: number;
  certificates_revoked: number;
}

/**
 * Removes a device that is not wiped and never will be (lost, stolen, destroyed): its device token and
 * certificates stop working at once, its VPN peer and address go, its pending wipe is cancelled, and
 * its hardware_id may enroll again. The device's record, logs and wipes go with it, as with DELETE; the
 * audit entry and the `device.retired` event keep what it was. A wiped device is deleted, not retired
 * (409 `device_wiped`). The reason is trimmed and must not be blank.
 */
export async function retireDevice(
  deps: DomainDeps,
  actor: Actor,
  organizationId: string,
  deviceId: string,
  input: { reason: string },
): Promise<RetiredDevice> {
  const reason = requiredReason(input.reason);
  const now = deps.clock.now();
  return await withTransaction(deps.db, async (tx) => {
    const device = await findDevice(tx, organizationId, deviceId);
    if (device.status === "wiped") {
      throw new ConflictError(
        "device_wiped",
        "device has been wiped",
        "a wiped device is removed with DELETE /api/v1/devices/:id",
      );
    }
    const pendingWipe = await firstRow(selectPendingWipes(tx, device.id));
    const removed = await removeDeviceWithCredentials(tx, device);
    const retired: RetiredDevice = {
      id: device.id,
      device_name: device.deviceName,
      hardware_id: device.hardwareId,
      reason,
      retired_at: toIso(now),
      cancelled_wipe_id: pendingWipe?.id ?? null,
      ...removed,
    };
    await recordEvent(
      tx,
      now,
      organizationId,
      "device.retired",
      deviceEventData(device, {
        reason,
        previous_status: device.status,
        cancelled_wipe_id: retired.cancelled_wipe_id,
      }),
    );
    await recordAudit(tx, now, actor, {
      action: "device.retire",
      targetType: "device",
      targetId: device.id,
      details: {
        device_name: device.deviceName,
        hardware_id: device.hardwareId,
        previous_status: device.status,
        reason,
        cancelled_wipe_id: retired.cancelled_wipe_id,
        ...removed,
      },
    });
    return retired;
  });
}

/** What went with a removed device: its VPN address, and the credentials that were still in force. */
export interface RemovedCredentials {
  /** The VPN address given back to the pool (the server's peer list drops the device at once). */
  released_vpn_ip: string | null;
  device_tokens_revoked: number;
  certificates_revoked: number;
}

/**
 * Removes a device's row, and with it its tokens, certificates, logs and wipes (removeDeviceRow): its
 * credentials stop working, its VPN peer and address go, its hardware_id may enroll again. Returns
 * what went, counted before the rows go.
 */
export async function removeDeviceWithCredentials(
  tx: DbOrTx,
  device: DeviceRow,
): Promise<RemovedCredentials> {
  const tokensInForce = (
    await tx
      .select({ id: deviceTokens.id })
      .from(deviceTokens)
      .where(and(eq(deviceTokens.deviceId, device.id), isNull(deviceTokens.revokedAt)))
  ).length;
  const certificatesInForce = (
    await tx
      .select({ id: deviceCertificates.id })
      .from(deviceCertificates)
      .where(and(eq(deviceCertificates.deviceId, device.id), isNull(deviceCertificates.revokedAt)))
  ).length;
  await removeDeviceRow(tx, device.organizationId, device.id);
  return {
    released_vpn_ip: device.vpnAddress === null ? null : formatIpv4(device.vpnAddress),
    device_tokens_revoked: tokensInForce,
    certificates_revoked: certificatesInForce,
  };
}
