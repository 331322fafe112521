import type { enrollmentTokens } from "../../db/schema";
import { toIso } from "../../lib/clock";

export type EnrollmentTokenRow = typeof enrollmentTokens.$inferSelect;

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

export function stateOf(row: EnrollmentTokenRow, now: Date): EnrollmentTokenState {
  if (row.revokedAt) return "revoked";
  if (row.expiresAt <= toIso(now)) return "expired";
  if (row.maxUses !== null && row.uses >= row.maxUses) return "used_up";
  return "active";
}

export function toView(row: EnrollmentTokenRow, now: Date): EnrollmentTokenView {
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
