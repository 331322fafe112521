import { withTransaction } from "../../db/client";
import type { Principal } from "../auth/principal";
import type { Actor, DomainDeps } from "../deps";
import { reduceUserDeviceLogs } from "../devices/reduce-user-device-logs";
import { markDeviceActivityObjection } from "../users/gdpr-account-state";
import { type GdprRequestView, recordGdprRequest } from "./gdpr-request";
import { findGdprSubject, gdprSubjectId } from "./gdpr-subject";

/** The processing Bulwark stops by itself when someone objects to it. */
export const DEVICE_ACTIVITY = "device_activity";

/**
 * Records an objection to processing (GDPR article 21). `device_activity` is honoured at once: the
 * activity-log entries of the person's devices keep their event and time only, the ones already written
 * and every later one (while a device is assigned to them). Any other processing is recorded as
 * needs_review, for the operator: Bulwark does not know what to stop.
 */
export async function objectToProcessing(
  deps: DomainDeps,
  principal: Principal,
  actor: Actor,
  userId: string | undefined,
  input: { processing: string; reason: string },
): Promise<GdprRequestView> {
  const subjectId = gdprSubjectId(principal, userId, { mustName: true });
  const organizationId = principal.organizationId;
  const now = deps.clock.now();
  return await withTransaction(deps.db, async (tx) => {
    const { row } = await findGdprSubject(tx, organizationId, subjectId, { allowClosed: false });
    const outcome = { organizationId, userId: row.id, type: "objection" as const, ...input };
    if (input.processing !== DEVICE_ACTIVITY)
      return await recordGdprRequest(tx, now, actor, {
        ...outcome,
        status: "needs_review",
        result: `recorded for the operator: Bulwark does not stop "${input.processing}" processing by itself, so someone has to review the objection and answer it`,
      });
    await markDeviceActivityObjection(tx, now, row.id);
    const reduced = await reduceUserDeviceLogs(tx, organizationId, row.id);
    return await recordGdprRequest(tx, now, actor, {
      ...outcome,
      status: "completed",
      result:
        "the activity-log details of this user's devices are no longer kept: their entries keep the event and time only",
      details: { log_entries_reduced: reduced },
    });
  });
}
