import { and, eq } from "drizzle-orm";
import { type DbOrTx, withTransaction } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { selectPendingWipes } from "../../db/lookups";
import { wipes } from "../../db/tables";
import { toIso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import { recordAudit } from "../audit/record-audit";
import type { Actor, DomainDeps } from "../deps";
import { ConflictError, NotFoundError } from "../errors";
import { recordEvent } from "../events/record-event";
import { appendDeviceLog } from "./append-device-log";
import { deviceEventData, findDevice } from "./device-views";
import { findPhoneEnrollment } from "./phone-enrollment";
import { requiredReason } from "./required-reason";
import { toWipeView, type WipeView } from "./wipe-view";

type WipeRow = typeof wipes.$inferSelect;

/** A wipe operation as polled by administrators. */

/** The answer to a wipe request (`WipeRequested` in the OpenAPI document). */
export interface WipeInitiation {
  message: string;
  wipe_id: string;
  status: "pending";
  initiated_at: string;
  initiated_by: string;
}

/** The device's oldest pending wipe, if any. */
export async function findPendingWipe(db: DbOrTx, deviceId: string): Promise<WipeRow | undefined> {
  return await firstRow(selectPendingWipes(db, deviceId).limit(1));
}

/**
 * Requests a remote wipe of the device's work profile. The agent receives it as a command at its next
 * check-in (suspended devices too) and confirms it. The reason is trimmed and must not be blank (400).
 * 409 while another wipe is pending or once wiped.
 */
export async function requestDeviceWipe(
  deps: DomainDeps,
  actor: Actor,
  organizationId: string,
  deviceId: string,
  input: { reason: string; notifyUser: boolean },
): Promise<WipeInitiation> {
  const reason = requiredReason(input.reason);
  const now = deps.clock.now();
  return await withTransaction(deps.db, async (tx) => {
    const device = await findDevice(tx, organizationId, deviceId);
    if (device.status === "wiped") throw new ConflictError("device_wiped", "device has already been wiped");
    if (await findPhoneEnrollment(tx, device.id))
      throw new ConflictError(
        "wipe_needs_agent",
        "this phone has no agent to wipe it",
        "a phone added with its VPN profile only cannot be wiped remotely: suspend it to cut its tunnel, ask its user to remove the profile, then retire it (POST /api/v1/devices/:id/retire)",
      );
    const pending = await findPendingWipe(tx, device.id);
    if (pending) {
      throw new ConflictError(
        "wipe_pending",
        "a wipe is already pending for this device",
        `wipe ${pending.id} was requested at ${pending.initiatedAt}`,
      );
    }
    const row: WipeRow = {
      id: newId(),
      deviceId: device.id,
      organizationId,
      status: "pending",
      reason,
      notifyUser: input.notifyUser,
      initiatedBy: actor.label ?? actor.id ?? actor.type,
      initiatedAt: toIso(now),
      completedAt: null,
      error: null,
      report: null,
    };
    await tx.insert(wipes).values(row);
    const details = { wipe_id: row.id, reason: row.reason, notify_user: row.notifyUser };
    await appendDeviceLog(tx, now, device.id, "wipe.requested", {
      ...details,
      initiated_by: row.initiatedBy,
    });
    await recordEvent(tx, now, organizationId, "device.wipe_requested", deviceEventData(device, details));
    await recordAudit(tx, now, actor, {
      action: "device.wipe",
      targetType: "device",
      targetId: device.id,
      details,
    });
    return {
      message: "wipe requested; the device receives it at its next check-in",
      wipe_id: row.id,
      status: "pending",
      initiated_at: row.initiatedAt,
      initiated_by: row.initiatedBy,
    };
  });
}

/** One wipe operation of one device of the organization. */
export async function getDeviceWipe(
  deps: DomainDeps,
  organizationId: string,
  deviceId: string,
  wipeId: string,
): Promise<WipeView> {
  const row = await firstRow(
    deps.db
      .select()
      .from(wipes)
      .where(
        and(
          eq(wipes.id, wipeId.toLowerCase()),
          eq(wipes.deviceId, deviceId.toLowerCase()),
          eq(wipes.organizationId, organizationId),
        ),
      ),
  );
  if (!row) throw new NotFoundError("wipe");
  return toWipeView(row);
}
