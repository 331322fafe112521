import { eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { users } from "../../db/tables";
import { toIso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import type { Role } from "../auth/scopes";
import { ConflictError } from "../errors";
import { parseEmail } from "./email";
import type { UserRow } from "./user-view";

/** Inserts a user row (email unique across the service, password hashed by the caller). */
export async function insertUser(
  tx: DbOrTx,
  now: Date,
  input: { organizationId: string; email: string; name: string; role: Role; passwordHash: string },
): Promise<UserRow> {
  const email = parseEmail(input.email);
  if (await firstRow(tx.select({ id: users.id }).from(users).where(eq(users.email, email)))) {
    throw new ConflictError("email_taken", "a user with this email already exists");
  }
  const timestamp = toIso(now);
  const row: UserRow = {
    id: newId(),
    organizationId: input.organizationId,
    email,
    name: input.name,
    role: input.role,
    passwordHash: input.passwordHash,
    isDisabled: false,
    isRestricted: false,
    deviceActivityObjectedAt: null,
    erasedAt: null,
    mfaEnabled: false,
    tokensValidAfter: null,
    lastLoginAt: null,
    createdAt: timestamp,
    updatedAt: timestamp,
    deletedAt: null,
  };
  await tx.insert(users).values(row);
  return row;
}
