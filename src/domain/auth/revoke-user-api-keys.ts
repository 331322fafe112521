import { and, eq, isNull } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { apiKeys } from "../../db/tables";
import { toIso } from "../../lib/clock";

/** Every API key of the user stops working at once (the user is deleted); returns how many were live. */
export async function revokeUserApiKeys(tx: DbOrTx, now: Date, userId: string): Promise<number> {
  return (
    await tx
      .update(apiKeys)
      .set({ revokedAt: toIso(now) })
      .where(and(eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt)))
      .returning({ id: apiKeys.id })
  ).length;
}
