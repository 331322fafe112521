import { and, count, eq, isNull, ne } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { users } from "../../db/tables";

/** Other admins than `userId` in the organization who can act: not disabled, not restricted. */
export async function countOtherActiveAdmins(
  tx: DbOrTx,
  organizationId: string,
  userId: string,
): Promise<number> {
  return (
    (
      await firstRow(
        tx
          .select({ value: count() })
          .from(users)
          .where(
            and(
              eq(users.organizationId, organizationId),
              eq(users.role, "admin"),
              eq(users.isDisabled, false),
              eq(users.isRestricted, false),
              isNull(users.deletedAt),
              ne(users.id, userId),
            ),
          ),
      )
    )?.value ?? 0
  );
}

/**
 * The user is the organization's last admin who can act (not deleted, disabled or restricted): erasing
 * or restricting them would leave nobody to administer the organization, or to lift the restriction.
 */
export async function isLastActingAdmin(
  tx: DbOrTx,
  user: {
    id: string;
    organizationId: string;
    role: string;
    isDisabled: boolean;
    isRestricted: boolean;
    deletedAt: string | null;
  },
): Promise<boolean> {
  if (user.deletedAt || user.role !== "admin" || user.isDisabled || user.isRestricted) return false;
  return (await countOtherActiveAdmins(tx, user.organizationId, user.id)) === 0;
}

export const LAST_ADMIN = "the last admin of an organization cannot be demoted, disabled or deleted";
