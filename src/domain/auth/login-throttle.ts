import { and, eq, isNull, sql } from "drizzle-orm";
import { type DbOrTx, withTransaction } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { lookUpLockout } from "../../db/lookups";
import { loginFailures } from "../../db/tables";
import { addSeconds, toIso } from "../../lib/clock";
import type { DomainDeps } from "../deps";
import { RateLimitedError } from "../errors";

export const TOO_MANY_LOGIN_ATTEMPTS = "Too many login attempts. Please try again in 15 minutes.";

/**
 * Counts a password attempt for (email, ip) BEFORE the password is checked, and throws 429 when the
 * pair is locked out or already has the maximum of attempts in the window. Counting first closes the
 * race where many concurrent guesses all pass the check while the slow hash runs. A correct password
 * then calls `clearPasswordAttempts`; a wrong one `settleFailedPasswordAttempt`.
 */
export async function reservePasswordAttempt(deps: DomainDeps, email: string, ip: string): Promise<void> {
  const now = deps.clock.now();
  const { login_max_failures: maxFailures, login_lockout_seconds: lockoutSeconds } = deps.config.auth;
  // A pair already locked out is refused from one prepared read, without the write lock: a guessing
  // script keeps hammering a locked pair, and each refusal took a write transaction.
  const lockout = await passwordLockout(deps, email, ip);
  if (lockout) throw lockout;
  // The lock is written and committed first, then reported: a throw inside would roll it back.
  const lockedUntil = await withTransaction(deps.db, async (tx): Promise<string | null> => {
    const row = await findRow(tx, email, ip);
    if (row?.lockedUntil && row.lockedUntil > toIso(now)) return row.lockedUntil;
    const isWindowOver = !row || addSeconds(new Date(row.windowStartedAt), lockoutSeconds) <= now;
    const attempts = isWindowOver ? 0 : row.failures;
    if (attempts >= maxFailures) {
      const until = toIso(addSeconds(now, lockoutSeconds));
      await tx
        .update(loginFailures)
        .set({ lockedUntil: until })
        .where(and(eq(loginFailures.email, email), eq(loginFailures.ip, ip)));
      return until;
    }
    const windowStartedAt = isWindowOver ? toIso(now) : (row?.windowStartedAt ?? toIso(now));
    const values = { failures: attempts + 1, windowStartedAt, lockedUntil: null };
    await tx
      .insert(loginFailures)
      .values({ email, ip, ...values })
      .onConflictDoUpdate({ target: [loginFailures.email, loginFailures.ip], set: values });
    return null;
  });
  if (lockedUntil) throw lockedOut(now, lockedUntil);
}

/**
 * The 429 for an (email, ip) pair locked out now, from one prepared read; null when it is not. Also
 * read by the fast lane (src/http/fast-lane.ts), which refuses a locked pair's sign-in without Elysia.
 */
export async function passwordLockout(
  deps: DomainDeps,
  email: string,
  ip: string,
): Promise<RateLimitedError | null> {
  const now = deps.clock.now();
  const lock = await lookUpLockout(deps.db, email, ip);
  return lock?.lockedUntil && lock.lockedUntil > toIso(now) ? lockedOut(now, lock.lockedUntil) : null;
}

/** After a wrong password: the attempt stays counted; reaching the maximum locks the pair out. */
export async function settleFailedPasswordAttempt(
  deps: DomainDeps,
  tx: DbOrTx,
  email: string,
  ip: string,
): Promise<void> {
  const now = deps.clock.now();
  const row = await findRow(tx, email, ip);
  if (row && row.failures >= deps.config.auth.login_max_failures && !row.lockedUntil) {
    await tx
      .update(loginFailures)
      .set({ lockedUntil: toIso(addSeconds(now, deps.config.auth.login_lockout_seconds)) })
      .where(and(eq(loginFailures.email, email), eq(loginFailures.ip, ip)));
  }
}

/** How many more failures (email, ip) may have before sign-in locks. */
export async function attemptsLeft(deps: DomainDeps, tx: DbOrTx, email: string, ip: string): Promise<number> {
  return Math.max(0, deps.config.auth.login_max_failures - ((await findRow(tx, email, ip))?.failures ?? 0));
}

/** After a correct password that still needs a second factor: this attempt was no failure. */
export async function releasePasswordAttempt(tx: DbOrTx, email: string, ip: string): Promise<void> {
  await tx
    .update(loginFailures)
    .set({
      failures: sql`CASE WHEN ${loginFailures.failures} > 0 THEN ${loginFailures.failures} - 1 ELSE 0 END`,
    })
    .where(and(eq(loginFailures.email, email), eq(loginFailures.ip, ip)));
}

/** After a full sign-in: the pair starts afresh. */
export async function clearPasswordAttempts(tx: DbOrTx, email: string, ip: string): Promise<void> {
  // A lock set while this attempt's hash ran (the other guesses of a burst used up the attempts) stays:
  // the right password got in within its allowance, the burst's pair is still locked out.
  await tx
    .delete(loginFailures)
    .where(and(eq(loginFailures.email, email), eq(loginFailures.ip, ip), isNull(loginFailures.lockedUntil)));
}

async function findRow(tx: DbOrTx, email: string, ip: string) {
  return await firstRow(
    tx
      .select()
      .from(loginFailures)
      .where(and(eq(loginFailures.email, email), eq(loginFailures.ip, ip))),
  );
}

function lockedOut(now: Date, lockedUntil: string): RateLimitedError {
  const retryAfter = Math.max(1, Math.ceil((new Date(lockedUntil).getTime() - now.getTime()) / 1000));
  return new RateLimitedError("login_throttled", TOO_MANY_LOGIN_ATTEMPTS, retryAfter);
}
