import { and, count, eq, isNull, ne } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { users } from "../../db/schema";

/** Other enabled admins than `userId` in the organization. */
export function countOtherActiveAdmins(tx: DbOrTx, organizationId: string, userId: string): number {
  return (
    tx
      .select({ value: count() })
      .from(users)
      .where(
        and(
          eq(users.organizationId, organizationId),
          eq(users.role, "admin"),
          eq(users.isDisabled, false),
          isNull(users.deletedAt),
          ne(users.id, userId),
        ),
      )
      .get()?.value ?? 0
  );
}

export const LAST_ADMIN = "the last admin of an organization cannot be demoted, disabled or deleted";
