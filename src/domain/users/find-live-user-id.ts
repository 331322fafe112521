import { and, eq, isNull } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { users } from "../../db/tables";

/** The id of a user of the organization who has not been deleted (id in any case), or undefined. */
export async function findLiveUserId(
  db: DbOrTx,
  organizationId: string,
  userId: string,
): Promise<string | undefined> {
  return (
    await firstRow(
      db
        .select({ id: users.id })
        .from(users)
        .where(
          and(
            eq(users.id, userId.toLowerCase()),
            eq(users.organizationId, organizationId),
            isNull(users.deletedAt),
          ),
        ),
    )
  )?.id;
}
