import { and, eq, isNull, ne } from "drizzle-orm";
import { type DbOrTx, withTransaction } from "../../db/client";
import { sessions } from "../../db/tables";
import { recordAudit } from "../audit/record-audit";
import type { Actor } from "../deps";
import { ValidationError } from "../errors";
import { cancelPendingSignIns } from "../mfa/sign-in-challenge";
import { type AuthDeps, verifyOwnToken } from "./auth-deps";
import type { Principal } from "./principal";
import { revokeSession } from "./refresh-session";
import type { RefreshClaims } from "./tokens";

/**
 * Ends the caller's session: the presented access token and the refresh token in the body stop working
 * at once. A refresh token of another user, or one that does not verify, is ignored (the caller's own
 * session still ends).
 */
export async function signOut(
  deps: AuthDeps,
  principal: Principal,
  actor: Actor,
  refreshToken: string | undefined,
): Promise<void> {
  if (principal.kind === "api_key") {
    throw new ValidationError(
      "an API key has no session to end",
      [],
      "revoke the key with DELETE /api/v1/auth/api-keys/:id",
      "api_key_has_no_session",
    );
  }
  let refreshSessionId: string | null = null;
  if (refreshToken) {
    try {
      const claims = await verifyOwnToken<RefreshClaims>(deps, refreshToken, "refresh");
      if (claims.sub === principal.userId) refreshSessionId = claims.sid;
    } catch {
      refreshSessionId = null;
    }
  }
  const now = deps.clock.now();
  await withTransaction(deps.db, async (tx) => {
    const ended = new Set([principal.sessionId, refreshSessionId].filter((id): id is string => id !== null));
    for (const sessionId of ended) await revokeSession(tx, now, sessionId, "logout");
    await recordAudit(tx, now, actor, {
      action: "auth.logout",
      targetType: "session",
      targetId: principal.sessionId,
    });
  });
}

/** Revokes every session of a user except `keepSessionId` (password change, disable, delete); returns how many. */
export async function revokeUserSessions(
  tx: DbOrTx,
  now: Date,
  userId: string,
  reason: string,
  keepSessionId: string | null = null,
): Promise<number> {
  const filter = keepSessionId
    ? and(eq(sessions.userId, userId), isNull(sessions.revokedAt), ne(sessions.id, keepSessionId))
    : and(eq(sessions.userId, userId), isNull(sessions.revokedAt));
  const ended = await tx.select({ id: sessions.id }).from(sessions).where(filter);
  for (const { id } of ended) await revokeSession(tx, now, id, reason);
  // A sign-in waiting for its second factor would otherwise outlive the password that started it.
  await cancelPendingSignIns(tx, userId);
  return ended.length;
}
