import { type Static, Type } from "@sinclair/typebox";
import { and, eq, isNull } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { users } from "../../db/tables";
import { Timestamp, Uuid } from "../../lib/schema-types";
import { RoleSchema } from "../auth/scopes";
import { NotFoundError } from "../errors";

/** A user as every response shows it. */
export const UserSchema = Type.Object(
  {
    id: Uuid,
    email: Type.String(),
    name: Type.String(),
    role: RoleSchema,
    organization_id: Uuid,
    disabled: Type.Boolean(),
    restricted: Type.Boolean({
      description: "Processing restricted at the user's request (GDPR); cannot sign in",
    }),
    mfa_enabled: Type.Boolean({ description: "The user has a confirmed second factor (TOTP or WebAuthn)" }),
    last_login_at: Type.Union([Timestamp, Type.Null()]),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: "User" },
);

export type UserView = Static<typeof UserSchema>;

export type UserRow = typeof users.$inferSelect;

export function toUserView(row: UserRow): UserView {
  return {
    id: row.id,
    email: row.email,
    name: row.name,
    role: row.role,
    organization_id: row.organizationId,
    disabled: row.isDisabled,
    restricted: row.isRestricted,
    mfa_enabled: row.mfaEnabled,
    last_login_at: row.lastLoginAt,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

export async function findLiveUser(db: DbOrTx, organizationId: string, id: string): Promise<UserRow> {
  const row = await firstRow(
    db
      .select()
      .from(users)
      .where(and(eq(users.id, id), eq(users.organizationId, organizationId), isNull(users.deletedAt))),
  );
  if (!row) throw new NotFoundError("user");
  return row;
}
