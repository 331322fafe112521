import { and, eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { loginFailures } from "../../db/schema";
import { addSeconds, toIso } from "../../lib/clock";
import type { DomainDeps } from "../deps";
import { RateLimitedError } from "../errors";

export const TOO_MANY_LOGIN_ATTEMPTS = "Too many login attempts. Please try again in 15 minutes.";

/** Throws 429 while (email, ip) is locked out, even for a correct password. */
export function assertNotLockedOut(deps: DomainDeps, email: string, ip: string): void {
  const now = deps.clock.now();
  const row = deps.db
    .select()
    .from(loginFailures)
    .where(and(eq(loginFailures.email, email), eq(loginFailures.ip, ip)))
    .get();
  if (row?.lockedUntil && row.lockedUntil > toIso(now)) {
    const retryAfter = Math.ceil((new Date(row.lockedUntil).getTime() - now.getTime()) / 1000);
    throw new RateLimitedError(TOO_MANY_LOGIN_ATTEMPTS, retryAfter);
  }
}

/** Counts one failure inside the lockout window; reaching the maximum locks (email, ip) out. */
export function recordLoginFailure(deps: DomainDeps, tx: DbOrTx, email: string, ip: string): void {
  const now = deps.clock.now();
  const { login_max_failures: maxFailures, login_lockout_seconds: lockoutSeconds } = deps.config.auth;
  const row = tx
    .select()
    .from(loginFailures)
    .where(and(eq(loginFailures.email, email), eq(loginFailures.ip, ip)))
    .get();
  const windowExpired = !row || addSeconds(new Date(row.windowStartedAt), lockoutSeconds) <= now;
  const failures = windowExpired ? 1 : row.failures + 1;
  const windowStartedAt = windowExpired ? toIso(now) : row.windowStartedAt;
  const lockedUntil = failures >= maxFailures ? toIso(addSeconds(now, lockoutSeconds)) : null;
  tx.insert(loginFailures)
    .values({ email, ip, failures, windowStartedAt, lockedUntil })
    .onConflictDoUpdate({
      target: [loginFailures.email, loginFailures.ip],
      set: { failures, windowStartedAt, lockedUntil },
    })
    .run();
}

export function clearLoginFailures(tx: DbOrTx, email: string, ip: string): void {
  tx.delete(loginFailures)
    .where(and(eq(loginFailures.email, email), eq(loginFailures.ip, ip)))
    .run();
}
