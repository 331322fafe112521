import { type Static, Type } from "@sinclair/typebox";
import type { enrollmentTokens } from "../../db/tables";
import { toIso } from "../../lib/clock";
import { literalUnion } from "../../lib/literal-union";
import { NullableTimestamp, Timestamp, Uuid } from "../../lib/schema-types";

export type EnrollmentTokenRow = typeof enrollmentTokens.$inferSelect;

/** Whether a token can still enroll a device (a state computed from the row, not stored). */
export const ENROLLMENT_TOKEN_STATES = ["active", "expired", "revoked", "used_up"] as const;
export type EnrollmentTokenState = (typeof ENROLLMENT_TOKEN_STATES)[number];

/** An enrollment token as listed; the token value itself is only returned at creation. */
export const EnrollmentTokenSchema = Type.Object(
  {
    id: Uuid,
    expires_at: Timestamp,
    max_uses: Type.Union([Type.Integer(), Type.Null()], { description: "null: unlimited" }),
    uses: Type.Integer(),
    user_id: Type.Union([Uuid, Type.Null()], { description: "Devices enrolled with it belong to this user" }),
    policy_id: Type.Union([Uuid, Type.Null()], {
      description: "Devices enrolled with it follow this policy; null: the organization default",
    }),
    created_at: Timestamp,
    revoked_at: NullableTimestamp,
    state: literalUnion(ENROLLMENT_TOKEN_STATES, {
      description: "Whether the token can still enroll a device",
    }),
  },
  { title: "EnrollmentToken" },
);

export type EnrollmentTokenView = Static<typeof EnrollmentTokenSchema>;

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
