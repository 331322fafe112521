import { withTransaction } from "../../db/client";
import { recordAudit } from "../audit/record-audit";
import type { DomainDeps } from "../deps";
import { DomainError } from "../errors";
import { findEnrollmentToken } from "./consume-enrollment-token";

/**
 * The refusals of an enrollment that are audited and counted (`bulwark_enrollments_refused_total`):
 * the token's state and what the organization already holds. A request refused before the token is
 * read (an invalid field, a malformed CSR, a rate limit) is neither.
 */
export const ENROLLMENT_REFUSAL_REASONS = [
  "enrollment_token_unknown",
  "enrollment_token_expired",
  "enrollment_token_revoked",
  "enrollment_token_used_up",
  "hardware_id_enrolled",
  "public_key_taken",
  "vpn_pool_exhausted",
] as const;

export type EnrollmentRefusalReason = (typeof ENROLLMENT_REFUSAL_REASONS)[number];

/** The reason of an enrollment refusal, or undefined for any other error. */
export function enrollmentRefusalReason(error: unknown): EnrollmentRefusalReason | undefined {
  if (!(error instanceof DomainError)) return undefined;
  return ENROLLMENT_REFUSAL_REASONS.find((reason) => reason === error.reason);
}

/** What the audit entry of a refused enrollment says about the attempt; never the token itself. */
export interface EnrollmentAttempt {
  enrollmentToken: string;
  deviceName: string;
  platform: string;
  hardwareId: string;
  ip: string | null;
  /** For hardware_id_enrolled: the device that holds the hardware id in the organization. */
  hardwareIdHolder?: string;
}

/**
 * Records a refused enrollment as a `device.enroll` failure: the caller as an anonymous actor (named by
 * the device name it sent) from its address, the reason, and the token (by id) and its organization
 * when the token exists; an unknown token's entry has no organization, as a sign-in with an unknown
 * email. Written in a transaction of its own, after the enrollment's was rolled back, so it stays.
 */
export async function auditEnrollmentRefusal(
  deps: DomainDeps,
  now: Date,
  attempt: EnrollmentAttempt,
  reason: EnrollmentRefusalReason,
): Promise<void> {
  const token = await findEnrollmentToken(deps.db, attempt.enrollmentToken);
  const organizationId = token?.organizationId ?? null;
  await withTransaction(deps.db, async (tx) => {
    await recordAudit(
      tx,
      now,
      { type: "anonymous", id: null, label: attempt.deviceName, organizationId, ip: attempt.ip },
      {
        action: "device.enroll",
        outcome: "failure",
        targetType: token ? "enrollment_token" : undefined,
        targetId: token?.id ?? null,
        details: {
          reason,
          hardware_id: attempt.hardwareId,
          platform: attempt.platform,
          ...(attempt.hardwareIdHolder ? { device_id: attempt.hardwareIdHolder } : {}),
        },
      },
    );
  });
}
