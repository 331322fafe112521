import { eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { ssoCodes, ssoIdentities } from "../../db/tables";

/**
 * Forgets which identity-provider accounts were an erased user's (and their unexchanged sign-in codes):
 * signing in there again provisions a new account, as for a stranger. Returns the links deleted.
 */
export async function unlinkUserIdentities(tx: DbOrTx, userId: string): Promise<number> {
  await tx.delete(ssoCodes).where(eq(ssoCodes.userId, userId));
  return (
    await tx
      .delete(ssoIdentities)
      .where(eq(ssoIdentities.userId, userId))
      .returning({ userId: ssoIdentities.userId })
  ).length;
}
