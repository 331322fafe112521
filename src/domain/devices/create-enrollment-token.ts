import { withTransaction } from "../../db/client";
import { enrollmentTokens } from "../../db/tables";
import { addSeconds, toIso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import { generateSecret, hashSecret } from "../../lib/secrets";
import { recordAudit } from "../audit/record-audit";
import { actorUserId } from "../auth/actor-user-id";
import type { Actor, DomainDeps } from "../deps";
import { NotFoundError } from "../errors";
import { findPolicyId } from "../policies/find-policy-id";
import { findLiveUserId } from "../users/find-live-user-id";
import { type EnrollmentTokenRow, type EnrollmentTokenView, toView } from "./enrollment-token-view";

export const ENROLLMENT_TOKEN_PREFIX = "bwe_";

export const DEFAULT_ENROLLMENT_TOKEN_HOURS = 168;

/**
 * Creates an enrollment token (`bwe_` + 256 random bits, stored as a SHA-256 hash). Devices enrolled
 * with it belong to `userId` and follow `policyId` (else the organization default); both must exist in
 * the organization.
 */
export async function createEnrollmentToken(
  deps: DomainDeps,
  actor: Actor,
  organizationId: string,
  input: { expiresInHours?: number; maxUses?: number | null; userId?: string; policyId?: string },
): Promise<EnrollmentTokenView & { token: string }> {
  const now = deps.clock.now();
  const token = generateSecret(32, ENROLLMENT_TOKEN_PREFIX);
  const row: EnrollmentTokenRow = {
    id: newId(),
    organizationId,
    tokenHash: hashSecret(token),
    expiresAt: toIso(addSeconds(now, (input.expiresInHours ?? DEFAULT_ENROLLMENT_TOKEN_HOURS) * 3600)),
    maxUses: input.maxUses === undefined ? 1 : input.maxUses,
    uses: 0,
    userId: input.userId ?? null,
    policyId: input.policyId ?? null,
    createdBy: actor.label ?? actor.id ?? actor.type,
    createdByUserId: null,
    createdAt: toIso(now),
    revokedAt: null,
  };
  await withTransaction(deps.db, async (tx) => {
    row.createdByUserId = await actorUserId(tx, actor);
    if (row.userId) {
      const userId = await findLiveUserId(tx, organizationId, row.userId);
      if (!userId) throw new NotFoundError("user", `no user ${row.userId} in this organization`);
      row.userId = userId;
    }
    if (row.policyId) {
      const policyId = await findPolicyId(tx, organizationId, row.policyId);
      if (!policyId) throw new NotFoundError("policy", `no policy ${row.policyId} in this organization`);
      row.policyId = policyId;
    }
    await tx.insert(enrollmentTokens).values(row);
    await recordAudit(tx, now, actor, {
      action: "enrollment_token.create",
      targetType: "enrollment_token",
      targetId: row.id,
      details: {
        expires_at: row.expiresAt,
        max_uses: row.maxUses,
        user_id: row.userId,
        policy_id: row.policyId,
      },
    });
  });
  return { ...toView(row, now), token };
}
