import { isNotNull, lt, or } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { deviceTokens, enrollmentTokens } from "../../db/schema";
import { toIso } from "../../lib/clock";
import type { DomainDeps } from "../deps";

/** Deletes device tokens that expired or were revoked, and enrollment tokens past expiry. */
export function purgeExpiredDeviceCredentials(deps: DomainDeps): {
  deviceTokens: number;
  enrollmentTokens: number;
} {
  const now = toIso(deps.clock.now());
  return withTransaction(deps.db, (tx) => {
    const purgedDeviceTokens = tx
      .delete(deviceTokens)
      .where(or(lt(deviceTokens.expiresAt, now), isNotNull(deviceTokens.revokedAt)))
      .returning({ id: deviceTokens.id })
      .all();
    const purgedEnrollmentTokens = tx
      .delete(enrollmentTokens)
      .where(lt(enrollmentTokens.expiresAt, now))
      .returning({ id: enrollmentTokens.id })
      .all();
    return { deviceTokens: purgedDeviceTokens.length, enrollmentTokens: purgedEnrollmentTokens.length };
  });
}
