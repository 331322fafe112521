import { and, eq, isNull } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { users } from "../../db/schema";
import type { Role } from "../auth/scopes";
import { NotFoundError } from "../errors";

export interface UserView {
  id: string;
  email: string;
  name: string;
  role: Role;
  organization_id: string;
  disabled: boolean;
  restricted: boolean;
  last_login_at: string | null;
  created_at: string;
  updated_at: string;
}

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
    last_login_at: row.lastLoginAt,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

export function findLiveUser(db: DbOrTx, organizationId: string, id: string): UserRow {
  const row = db
    .select()
    .from(users)
    .where(and(eq(users.id, id), eq(users.organizationId, organizationId), isNull(users.deletedAt)))
    .get();
  if (!row) throw new NotFoundError("user");
  return row;
}
