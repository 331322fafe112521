import { and, eq, inArray, lt } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { wipes } from "../../db/tables";
import { addSeconds, toIso } from "../../lib/clock";
import { recordAudit } from "../audit/record-audit";
import { type DomainDeps, systemActor } from "../deps";
import { appendDeviceLog } from "./append-device-log";

/**
 * Marks wipes still pending after `devices.wipe_timeout_seconds` as timed_out: the agent no longer
 * receives them and an administrator may request a new wipe. Returns how many timed out.
 */
export async function timeOutWipes(deps: DomainDeps): Promise<number> {
  const now = deps.clock.now();
  const timestamp = toIso(now);
  const timeoutSeconds = deps.config.devices.wipe_timeout_seconds;
  const cutoff = toIso(addSeconds(now, -timeoutSeconds));
  return await withTransaction(deps.db, async (tx) => {
    const expired = tx
      .select({ id: wipes.id })
      .from(wipes)
      .where(and(eq(wipes.status, "pending"), lt(wipes.initiatedAt, cutoff)));
    const rows = await tx
      .update(wipes)
      .set({
        status: "timed_out",
        completedAt: timestamp,
        error: `not confirmed by the device within ${timeoutSeconds} seconds`,
      })
      .where(inArray(wipes.id, expired))
      .returning();
    for (const wipe of rows) {
      const details = { wipe_id: wipe.id, reason: wipe.reason, initiated_at: wipe.initiatedAt };
      await appendDeviceLog(tx, now, wipe.deviceId, "wipe.timed_out", details);
      await recordAudit(tx, now, systemActor(wipe.organizationId), {
        action: "device.wipe_timeout",
        outcome: "failure",
        targetType: "device",
        targetId: wipe.deviceId,
        details,
      });
    }
    return rows.length;
  });
}
