import { eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { mfaChallenges, mfaMethods, recoveryCodes } from "../../db/schema";

/** Deletes every second factor, recovery code and pending challenge of an erased user; returns the factors. */
export function deleteUserFactors(tx: DbOrTx, userId: string): number {
  tx.delete(recoveryCodes).where(eq(recoveryCodes.userId, userId)).run();
  tx.delete(mfaChallenges).where(eq(mfaChallenges.userId, userId)).run();
  return tx.delete(mfaMethods).where(eq(mfaMethods.userId, userId)).returning({ id: mfaMethods.id }).all()
    .length;
}
