import { and, eq, isNull, lt, or, sql } from "drizzle-orm";
import { type DbOrTx, withTransaction } from "../../db/client";
import { selectNewestFirstPage } from "../../db/paged-query";
import { enrollmentTokens, policies, users } from "../../db/schema";
import { addSeconds, toIso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import { generateSecret, hashSecret } from "../../lib/secrets";
import { recordAudit } from "../audit/record-audit";
import type { Actor, DomainDeps } from "../deps";
import { NotFoundError, UnauthenticatedError } from "../errors";

export const ENROLLMENT_TOKEN_PREFIX = "bwe_";
export const DEFAULT_ENROLLMENT_TOKEN_HOURS = 168;

type EnrollmentTokenRow = typeof enrollmentTokens.$inferSelect;

/** Whether a token can still enroll a device. */
export type EnrollmentTokenState = "active" | "expired" | "revoked" | "used_up";

/** An enrollment token as listed; the token value itself is only returned at creation. */
export interface EnrollmentTokenView {
  id: string;
  expires_at: string;
  max_uses: number | null;
  uses: number;
  user_id: string | null;
  policy_id: string | null;
  created_at: string;
  revoked_at: string | null;
  state: EnrollmentTokenState;
}

function stateOf(row: EnrollmentTokenRow, now: Date): EnrollmentTokenState {
  if (row.revokedAt) return "revoked";
  if (row.expiresAt <= toIso(now)) return "expired";
  if (row.maxUses !== null && row.uses >= row.maxUses) return "used_up";
  return "active";
}

function toView(row: EnrollmentTokenRow, now: Date): EnrollmentTokenView {
  return {
    id: row.id,
    expires_at: row.expiresAt,
    max_uses: row.maxUses,
    uses: row.uses,
    user_id: row.userId,
    policy_id: row.policyId,
    created_at: row.createdAt,
    revoked_at: row.revokedAt,
    state: stateOf(row, now),
  };
}

/**
 * Creates an enrollment token (`bwe_` + 256 random bits, stored as a SHA-256 hash). Devices enrolled
 * with it belong to `userId` and follow `policyId` (else the organization default); both must exist in
 * the organization.
 */
export function createEnrollmentToken(
  deps: DomainDeps,
  actor: Actor,
  organizationId: string,
  input: { expiresInHours?: number; maxUses?: number | null; userId?: string; policyId?: string },
): EnrollmentTokenView & { token: string } {
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
    createdAt: toIso(now),
    revokedAt: null,
  };
  withTransaction(deps.db, (tx) => {
    if (row.userId) {
      const userId = findLiveUserId(tx, organizationId, row.userId);
      if (!userId) throw new NotFoundError("user", `no user ${row.userId} in this organization`);
      row.userId = userId;
    }
    if (row.policyId) {
      const policyId = findPolicyId(tx, organizationId, row.policyId);
      if (!policyId) throw new NotFoundError("policy", `no policy ${row.policyId} in this organization`);
      row.policyId = policyId;
    }
    tx.insert(enrollmentTokens).values(row).run();
    recordAudit(tx, now, actor, {
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

/** The organization's enrollment tokens, newest first, without their values. */
export function listEnrollmentTokens(
  deps: DomainDeps,
  organizationId: string,
  page: { page: number; pageSize: number },
): { data: EnrollmentTokenView[]; total: number } {
  const now = deps.clock.now();
  const filter = eq(enrollmentTokens.organizationId, organizationId);
  const { data: rows, total } = selectNewestFirstPage(deps.db, enrollmentTokens, filter, page);
  return { data: rows.map((row) => toView(row, now)), total };
}

/** Revokes an enrollment token; devices already enrolled with it are not affected. Idempotent. */
export function revokeEnrollmentToken(
  deps: DomainDeps,
  actor: Actor,
  organizationId: string,
  id: string,
): void {
  const now = deps.clock.now();
  withTransaction(deps.db, (tx) => {
    const row = tx
      .select({ id: enrollmentTokens.id, revokedAt: enrollmentTokens.revokedAt })
      .from(enrollmentTokens)
      .where(
        and(eq(enrollmentTokens.id, id.toLowerCase()), eq(enrollmentTokens.organizationId, organizationId)),
      )
      .get();
    if (!row) throw new NotFoundError("enrollment token");
    if (row.revokedAt) return;
    tx.update(enrollmentTokens)
      .set({ revokedAt: toIso(now) })
      .where(eq(enrollmentTokens.id, row.id))
      .run();
    recordAudit(tx, now, actor, {
      action: "enrollment_token.revoke",
      targetType: "enrollment_token",
      targetId: row.id,
    });
  });
}

/**
 * Counts one use of an enrollment token inside the enrollment transaction, or refuses it (401 saying
 * why). The increment is guarded by max_uses in SQL, so concurrent enrollments cannot overuse a token.
 */
export function consumeEnrollmentToken(tx: DbOrTx, now: Date, token: string): EnrollmentTokenRow {
  const row = tx
    .select()
    .from(enrollmentTokens)
    .where(eq(enrollmentTokens.tokenHash, hashSecret(token)))
    .get();
  if (!row)
    throw new UnauthenticatedError(
      "enrollment_token_unknown",
      "invalid enrollment token",
      "the enrollment token is unknown",
    );
  const state = stateOf(row, now);
  if (state !== "active") throw refusal(state);
  const used = tx
    .update(enrollmentTokens)
    .set({ uses: sql`${enrollmentTokens.uses} + 1` })
    .where(
      and(
        eq(enrollmentTokens.id, row.id),
        isNull(enrollmentTokens.revokedAt),
        or(isNull(enrollmentTokens.maxUses), lt(enrollmentTokens.uses, enrollmentTokens.maxUses)),
      ),
    )
    .returning()
    .get();
  if (!used) throw refusal("used_up");
  return used;
}

function refusal(state: Exclude<EnrollmentTokenState, "active">): UnauthenticatedError {
  const reasons = {
    expired: "the enrollment token has expired",
    revoked: "the enrollment token has been revoked",
    used_up: "the enrollment token has reached its maximum number of uses",
  };
  return new UnauthenticatedError(`enrollment_token_${state}`, "invalid enrollment token", reasons[state]);
}

/** The id of a user of the organization who has not been deleted (id in any case), or undefined. */
export function findLiveUserId(db: DbOrTx, organizationId: string, userId: string): string | undefined {
  return db
    .select({ id: users.id })
    .from(users)
    .where(
      and(
        eq(users.id, userId.toLowerCase()),
        eq(users.organizationId, organizationId),
        isNull(users.deletedAt),
      ),
    )
    .get()?.id;
}

/** The id of a policy of the organization (id in any case), or undefined. */
export function findPolicyId(db: DbOrTx, organizationId: string, policyId: string): string | undefined {
  return db
    .select({ id: policies.id })
    .from(policies)
    .where(and(eq(policies.id, policyId.toLowerCase()), eq(policies.organizationId, organizationId)))
    .get()?.id;
}

/**
 * The id of the enrollment token with this value, whatever its state, or null: enrollment is rate
 * limited per existing token, so guessed values fall back to the per-address budget.
 */
export function findEnrollmentTokenId(db: DbOrTx, token: string): string | null {
  const row = db
    .select({ id: enrollmentTokens.id })
    .from(enrollmentTokens)
    .where(eq(enrollmentTokens.tokenHash, hashSecret(token)))
    .get();
  return row?.id ?? null;
}

/** A policy is deleted: tokens that would have assigned it now enroll devices with the default. */
export function clearEnrollmentTokenPolicy(tx: DbOrTx, organizationId: string, policyId: string): void {
  tx.update(enrollmentTokens)
    .set({ policyId: null })
    .where(and(eq(enrollmentTokens.organizationId, organizationId), eq(enrollmentTokens.policyId, policyId)))
    .run();
}
