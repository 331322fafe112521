import { and, eq, isNull } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { devices, deviceTokens, wipes } from "../../db/tables";
import { toIso } from "../../lib/clock";
import { recordAudit } from "../audit/record-audit";
import type { Actor, DomainDeps } from "../deps";
import { ConflictError, NotFoundError } from "../errors";
import { recordEvent } from "../events/record-event";
import { revokeDeviceCertificates } from "../pki/device-certificates";
import { appendDeviceLog } from "./append-device-log";
import type { DevicePrincipal } from "./authenticate-device";
import { deviceEventData, findDevice } from "./device-views";
import { toWipeView, type WipeReport, type WipeView } from "./wipe-view";

/**
 * The agent's report on a wipe command. Success: the wipe is `completed`, the device `wiped` (its last
 * facts, enforcement and compliance forgotten: none of them holds any more) and every token of the
 * device revoked (this very request is its last). Failure: the wipe is `failed` with the
 * error and the device keeps its status, so a new wipe can be requested. 409 unless the wipe is pending.
 */
export async function completeWipe(
  deps: DomainDeps,
  caller: DevicePrincipal,
  actor: Actor,
  wipeId: string,
  input: { success: boolean; error?: string; report?: WipeReport },
): Promise<WipeView> {
  const now = deps.clock.now();
  const timestamp = toIso(now);
  return await withTransaction(deps.db, async (tx) => {
    const device = await findDevice(tx, caller.organizationId, caller.deviceId);
    const wipe = await firstRow(
      tx
        .select()
        .from(wipes)
        .where(and(eq(wipes.id, wipeId.toLowerCase()), eq(wipes.deviceId, device.id))),
    );
    if (!wipe) throw new NotFoundError("wipe");
    if (wipe.status !== "pending") {
      throw new ConflictError(
        "wipe_not_pending",
        "wipe is not pending",
        `the wipe is already ${wipe.status}`,
      );
    }
    const outcome = input.success
      ? { status: "completed" as const, error: null }
      : { status: "failed" as const, error: input.error ?? "the agent reported a failure" };
    await tx
      .update(wipes)
      .set({
        status: outcome.status,
        completedAt: timestamp,
        error: outcome.error,
        report: input.report ?? null,
      })
      .where(eq(wipes.id, wipe.id));
    const details = {
      wipe_id: wipe.id,
      reason: wipe.reason,
      error: outcome.error,
      ...(input.report
        ? {
            files_erased: input.report.files,
            bytes_erased: input.report.bytes,
            users_notified: input.report.notification.sessions,
          }
        : {}),
    };
    if (input.success) {
      // What the device last reported (the tunnel up, its compliance) is no longer so: it is forgotten
      // rather than shown as the wiped device's state; the log keeps the history.
      await tx
        .update(devices)
        .set({
          status: "wiped",
          updatedAt: timestamp,
          facts: null,
          ignoredFacts: null,
          enforcement: null,
          enforcementReportedAt: null,
          complianceStatus: "unknown",
          complianceViolations: [],
          complianceMissing: [],
          complianceCheckedAt: null,
          complianceStale: false,
        })
        .where(eq(devices.id, device.id));
      await tx
        .update(deviceTokens)
        .set({ revokedAt: timestamp })
        .where(and(eq(deviceTokens.deviceId, device.id), isNull(deviceTokens.revokedAt)));
      await revokeDeviceCertificates(tx, now, device.id, "wiped");
      await appendDeviceLog(tx, now, device.id, "wipe.completed", details);
      await recordEvent(
        tx,
        now,
        device.organizationId,
        "device.wiped",
        deviceEventData(device, { wipe_id: wipe.id, completed_at: timestamp }),
      );
    } else {
      await appendDeviceLog(tx, now, device.id, "wipe.failed", details);
    }
    await recordAudit(tx, now, actor, {
      action: input.success ? "device.wipe_complete" : "device.wipe_fail",
      outcome: input.success ? "success" : "failure",
      targetType: "device",
      targetId: device.id,
      details,
    });
    return toWipeView({
      ...wipe,
      status: outcome.status,
      completedAt: timestamp,
      error: outcome.error,
      report: input.report ?? null,
    });
  });
}
