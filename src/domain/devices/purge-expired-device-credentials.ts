import { and, isNotNull, lt, or } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { deviceTokens, enrollmentTokens } from "../../db/tables";
import { addSeconds, toIso } from "../../lib/clock";
import type { DomainDeps } from "../deps";

/**
 * Days an expired or revoked enrollment token stays listed (state `expired` or `revoked`, used-up ones
 * until they expire) before it is purged, so administrators can see why an enrollment was refused.
 */
export const ENROLLMENT_TOKEN_GRACE_DAYS = 30;

/**
 * Deletes device tokens that expired or were revoked, and enrollment tokens that expired or were revoked
 * more than ENROLLMENT_TOKEN_GRACE_DAYS ago.
 */
export async function purgeExpiredDeviceCredentials(deps: DomainDeps): Promise<{
  deviceTokens: number;
  enrollmentTokens: number;
}> {
  const now = deps.clock.now();
  const timestamp = toIso(now);
  const graceCutoff = toIso(addSeconds(now, -ENROLLMENT_TOKEN_GRACE_DAYS * 86400));
  return await withTransaction(deps.db, async (tx) => {
    const purgedDeviceTokens = await tx
      .delete(deviceTokens)
      .where(or(lt(deviceTokens.expiresAt, timestamp), isNotNull(deviceTokens.revokedAt)))
      .returning({ id: deviceTokens.id });
    const purgedEnrollmentTokens = await tx
      .delete(enrollmentTokens)
      .where(
        or(
          lt(enrollmentTokens.expiresAt, graceCutoff),
          and(isNotNull(enrollmentTokens.revokedAt), lt(enrollmentTokens.revokedAt, graceCutoff)),
        ),
      )
      .returning({ id: enrollmentTokens.id });
    return { deviceTokens: purgedDeviceTokens.length, enrollmentTokens: purgedEnrollmentTokens.length };
  });
}
