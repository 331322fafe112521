import { and, eq, isNull } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { apiKeys } from "../../db/schema";
import { toIso } from "../../lib/clock";

/** Every API key of the user stops working at once (the user is deleted). */
export function revokeUserApiKeys(tx: DbOrTx, now: Date, userId: string): void {
  tx.update(apiKeys)
    .set({ revokedAt: toIso(now) })
    .where(and(eq(apiKeys.userId, userId), isNull(apiKeys.revokedAt)))
    .run();
}
