import { and, eq, gte, inArray, isNull, ne } from "drizzle-orm";
import { type DbOrTx, withTransaction } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { refreshTokens, sessions, users } from "../../db/tables";
import { toIso } from "../../lib/clock";
import { recordAudit } from "../audit/record-audit";
import { UnauthenticatedError } from "../errors";
import { type AuthDeps, verifyOwnToken } from "./auth-deps";
import { insertRefreshToken, signTokenPair, type TokenPair } from "./issue-session";
import type { RefreshClaims } from "./tokens";

/**
 * How long a browser may present the refresh token it just used again. A page reloaded or closed while
 * its refresh was in flight never stores the cookie the answer carried, and its next load presents the
 * used one: within this window, and while the token that replaced it is unused, that is the lost
 * answer being asked for again, not theft.
 */
export const BROWSER_RETRY_SECONDS = 30;

/**
 * Rotates a refresh token: the presented one is used up and a new pair is returned. Presenting a token
 * that was already used is treated as theft: the whole session (every refresh and access token) is
 * revoked, except for a browser's retry (`isBrowserCookie`, see BROWSER_RETRY_SECONDS), which replaces
 * the unused successor instead.
 */
export async function refreshSession(
  deps: AuthDeps,
  input: { refreshToken: string; ip: string; isBrowserCookie?: boolean },
): Promise<TokenPair> {
  const claims = await verifyOwnToken<RefreshClaims>(deps, input.refreshToken, "refresh");
  const row = await firstRow(deps.db.select().from(refreshTokens).where(eq(refreshTokens.id, claims.jti)));
  const session = await firstRow(deps.db.select().from(sessions).where(eq(sessions.id, claims.sid)));
  const user = await firstRow(deps.db.select().from(users).where(eq(users.id, claims.sub)));
  if (!row || !session || !user || row.sessionId !== session.id)
    throw new UnauthenticatedError("refresh_token_invalid", "invalid refresh token");
  const now = deps.clock.now();
  const actor = {
    type: "user" as const,
    id: user.id,
    label: user.email,
    organizationId: user.organizationId,
    ip: input.ip,
  };
  const lostSuccessors =
    input.isBrowserCookie && row.usedAt ? await unusedSuccessors(deps.db, row, now) : null;
  /** Presenting a used token is theft: the whole session ends. */
  const endForReuse = async () => {
    if (!session.revokedAt) {
      await withTransaction(deps.db, async (tx) => {
        await revokeSession(tx, now, session.id, "refresh token reuse");
        await recordAudit(tx, now, actor, {
          action: "auth.refresh_token_reused",
          outcome: "failure",
          targetType: "session",
          targetId: session.id,
        });
      });
    }
    return new UnauthenticatedError(
      "refresh_token_reused",
      "invalid refresh token",
      "this refresh token was already used; the session has been revoked",
    );
  };
  if (row.usedAt && !lostSuccessors) throw await endForReuse();
  if (row.revokedAt || session.revokedAt)
    throw new UnauthenticatedError("session_ended", "invalid refresh token", "the session has ended");
  if (user.isDisabled || user.isRestricted || user.deletedAt)
    throw new UnauthenticatedError("account_disabled", "account disabled");

  const signed = await signTokenPair(deps, user, session.id);
  const outcome = await withTransaction(deps.db, async (tx) => {
    // Decided again inside the transaction: two retries of one lost answer at once (two tabs reloaded)
    // must not both keep a successor, and two refreshes with one unused token must not both win.
    const current = await firstRow(tx.select().from(refreshTokens).where(eq(refreshTokens.id, row.id)));
    if (current?.revokedAt)
      throw new UnauthenticatedError("session_ended", "invalid refresh token", "the session has ended");
    if (current?.usedAt) {
      // A token unused when this request read it, used now: another refresh with it won (two tabs
      // at once), and this one is refused as before, leaving the winner's token live.
      if (!lostSuccessors) throw new UnauthenticatedError("refresh_token_invalid", "invalid refresh token");
      // The browser never received these: they end, so the session keeps a single live refresh token.
      const successors = await unusedSuccessors(tx, current, now);
      // One of them was used meanwhile: the used token is in someone else's hands.
      if (!successors) return "reused" as const;
      const ended = await tx
        .update(refreshTokens)
        .set({ revokedAt: toIso(now) })
        .where(
          and(
            inArray(refreshTokens.id, successors),
            isNull(refreshTokens.usedAt),
            isNull(refreshTokens.revokedAt),
          ),
        )
        .returning({ id: refreshTokens.id });
      if (ended.length !== successors.length)
        throw new UnauthenticatedError("refresh_token_invalid", "invalid refresh token");
    } else {
      // Only one concurrent refresh with the same token can win this update.
      const used = await tx
        .update(refreshTokens)
        .set({ usedAt: toIso(now) })
        .where(
          and(eq(refreshTokens.id, row.id), isNull(refreshTokens.usedAt), isNull(refreshTokens.revokedAt)),
        )
        .returning({ id: refreshTokens.id });
      if (used.length !== 1) throw new UnauthenticatedError("refresh_token_invalid", "invalid refresh token");
    }
    await insertRefreshToken(tx, now, session.id, user.id, signed);
    await tx
      .update(sessions)
      .set({ expiresAt: toIso(signed.refreshExpiresAt) })
      .where(eq(sessions.id, session.id));
    return "refreshed" as const;
  });
  if (outcome === "reused") throw await endForReuse();
  return signed.pair;
}

/**
 * The live tokens issued since `used` was used, if that was less than BROWSER_RETRY_SECONDS ago and none
 * of them has been used since; null otherwise (then presenting `used` again is theft).
 */
async function unusedSuccessors(
  db: DbOrTx,
  used: typeof refreshTokens.$inferSelect,
  now: Date,
): Promise<string[] | null> {
  if (!used.usedAt || now.getTime() - Date.parse(used.usedAt) > BROWSER_RETRY_SECONDS * 1000) return null;
  const successors = await db
    .select({ id: refreshTokens.id, usedAt: refreshTokens.usedAt, revokedAt: refreshTokens.revokedAt })
    .from(refreshTokens)
    .where(
      and(
        eq(refreshTokens.sessionId, used.sessionId),
        ne(refreshTokens.id, used.id),
        gte(refreshTokens.issuedAt, used.usedAt),
      ),
    );
  // A successor used means the used token is presented by someone else: theft. One revoked was ended
  // by an earlier retry of the same lost answer (two tabs reloaded at once), which the live one replaced.
  const live = successors.filter((token) => !token.revokedAt);
  if (live.length === 0 || successors.some((token) => token.usedAt)) return null;
  return live.map((token) => token.id);
}

/** Marks a session and all of its refresh tokens revoked. */
export async function revokeSession(tx: DbOrTx, now: Date, sessionId: string, reason: string): Promise<void> {
  await tx
    .update(sessions)
    .set({ revokedAt: toIso(now), revokedReason: reason })
    .where(and(eq(sessions.id, sessionId), isNull(sessions.revokedAt)));
  await tx
    .update(refreshTokens)
    .set({ revokedAt: toIso(now) })
    .where(and(eq(refreshTokens.sessionId, sessionId), isNull(refreshTokens.revokedAt)));
}
