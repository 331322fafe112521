import { eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { mfaChallenges, mfaMethods, recoveryCodes } from "../../db/tables";

/** Deletes every second factor, recovery code and pending challenge of an erased user; returns the factors. */
export async function deleteUserFactors(tx: DbOrTx, userId: string): Promise<number> {
  await tx.delete(recoveryCodes).where(eq(recoveryCodes.userId, userId));
  await tx.delete(mfaChallenges).where(eq(mfaChallenges.userId, userId));
  return (await tx.delete(mfaMethods).where(eq(mfaMethods.userId, userId)).returning({ id: mfaMethods.id }))
    .length;
}
