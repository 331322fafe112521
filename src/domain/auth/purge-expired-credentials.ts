import { and, isNull, lt, or } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { loginFailures, mfaChallenges, refreshTokens, sessions } from "../../db/tables";
import { addSeconds, toIso } from "../../lib/clock";
import type { DomainDeps } from "../deps";

/** Deletes sessions, refresh tokens and MFA challenges past expiry, and login-failure windows long over. */
export async function purgeExpiredCredentials(deps: DomainDeps): Promise<{
  sessions: number;
  refreshTokens: number;
  loginFailures: number;
  mfaChallenges: number;
}> {
  const now = deps.clock.now();
  const nowIso = toIso(now);
  const staleFailuresBefore = toIso(addSeconds(now, -deps.config.auth.login_lockout_seconds));
  return await withTransaction(deps.db, async (tx) => {
    const tokens = await tx
      .delete(refreshTokens)
      .where(lt(refreshTokens.expiresAt, nowIso))
      .returning({ id: refreshTokens.id });
    const ended = await tx
      .delete(sessions)
      .where(lt(sessions.expiresAt, nowIso))
      .returning({ id: sessions.id });
    const failures = await tx
      .delete(loginFailures)
      .where(
        and(
          lt(loginFailures.windowStartedAt, staleFailuresBefore),
          or(isNull(loginFailures.lockedUntil), lt(loginFailures.lockedUntil, nowIso)),
        ),
      )
      .returning({ email: loginFailures.email });
    const challenges = await tx
      .delete(mfaChallenges)
      .where(lt(mfaChallenges.expiresAt, nowIso))
      .returning({ id: mfaChallenges.id });
    return {
      sessions: ended.length,
      refreshTokens: tokens.length,
      loginFailures: failures.length,
      mfaChallenges: challenges.length,
    };
  });
}
