import { eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { apiKeys, loginFailures, sessions } from "../../db/tables";
import { revokeUserApiKeys } from "./revoke-user-api-keys";
import { revokeUserSessions } from "./sign-out";

/** The ids of every API key a user created, live or not (audit entries name keys by id). */
export async function userApiKeyIds(tx: DbOrTx, userId: string): Promise<string[]> {
  return (await tx.select({ id: apiKeys.id }).from(apiKeys).where(eq(apiKeys.userId, userId))).map(
    (key) => key.id,
  );
}

/**
 * An erased user's credentials: every session (and its refresh tokens) and API key ends at once; the
 * rows stay, without the addresses sessions came from or the names keys were given, and the sign-in
 * failures counted against the email go.
 */
export async function endUserAccess(
  tx: DbOrTx,
  now: Date,
  userId: string,
  email: string | null,
): Promise<{ sessions_revoked: number; api_keys_revoked: number }> {
  const revoked = {
    sessions_revoked: await revokeUserSessions(tx, now, userId, "user erased"),
    api_keys_revoked: await revokeUserApiKeys(tx, now, userId),
  };
  await tx.update(sessions).set({ ip: null }).where(eq(sessions.userId, userId));
  await tx.update(apiKeys).set({ name: "erased" }).where(eq(apiKeys.userId, userId));
  if (email) await tx.delete(loginFailures).where(eq(loginFailures.email, email));
  return revoked;
}
