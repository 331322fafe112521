import { and, isNotNull, lt, lte, or } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { deviceTokens, enrollmentTokens, phoneEnrollments, phoneProfileLinks } from "../../db/tables";
import { addSeconds, toIso } from "../../lib/clock";
import type { DomainDeps } from "../deps";

/**
 * Days an expired or revoked enrollment token stays listed (state `expired` or `revoked`, used-up ones
 * until they expire) before it is purged, so administrators can see why an enrollment was refused.
 */
export const ENROLLMENT_TOKEN_GRACE_DAYS = 30;

/**
 * Deletes device tokens that expired or were revoked, enrollment tokens that expired or were revoked
 * more than ENROLLMENT_TOKEN_GRACE_DAYS ago, and phones' profile links that were used or expired; erases
 * the private keys the server made for phones and held past their day.
 */
export async function purgeExpiredDeviceCredentials(deps: DomainDeps): Promise<{
  deviceTokens: number;
  enrollmentTokens: number;
  phoneKeys: number;
  profileLinks: number;
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
    const erasedPhoneKeys = await tx
      .update(phoneEnrollments)
      .set({ sealedPrivateKey: null, keyHeldUntil: null })
      .where(and(isNotNull(phoneEnrollments.keyHeldUntil), lte(phoneEnrollments.keyHeldUntil, timestamp)))
      .returning({ id: phoneEnrollments.deviceId });
    const purgedLinks = await tx
      .delete(phoneProfileLinks)
      .where(or(lte(phoneProfileLinks.expiresAt, timestamp), isNotNull(phoneProfileLinks.usedAt)))
      .returning({ id: phoneProfileLinks.id });
    return {
      deviceTokens: purgedDeviceTokens.length,
      enrollmentTokens: purgedEnrollmentTokens.length,
      phoneKeys: erasedPhoneKeys.length,
      profileLinks: purgedLinks.length,
    };
  });
}
