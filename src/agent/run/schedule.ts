/** The longest wait between two failed check-ins, before its jitter: 15 minutes. */
export const MAX_BACKOFF_SECONDS = 15 * 60;
const FIRST_BACKOFF_SECONDS = 5;
/** The shortest wait between two check-ins the agent keeps, whatever the server asks: a fleet never floods it. */
export const MIN_CHECKIN_SECONDS = 5;
/** 401s for longer than this (or one that says the device was wiped) mean the server forgot this identity. */
export const UNAUTHENTICATED_GIVE_UP_SECONDS = 60 * 60;

/**
 * Seconds until the next check-in after a successful one: the server's next_checkin_seconds, spread by
 * ±10% so that agents started together (a fleet after a power cut) do not check in together.
 */
export function nextCheckInDelay(nextCheckInSeconds: number, random: () => number = Math.random): number {
  return Math.max(MIN_CHECKIN_SECONDS, nextCheckInSeconds) * (0.9 + 0.2 * random());
}

/**
 * Seconds until the next try after `failures` failed check-ins in a row (1 for the first): 5 s doubling
 * to 15 minutes, then a uniform draw between that and twice that (jitter after the cap, so that a fleet
 * waiting at the cap does not come back as one). A Retry-After from the server is honoured as the least
 * wait, with up to 10% more.
 */
export function backoffDelay(
  failures: number,
  retryAfterSeconds: number | null = null,
  random: () => number = Math.random,
): number {
  const capped = Math.min(MAX_BACKOFF_SECONDS, FIRST_BACKOFF_SECONDS * 2 ** Math.max(0, failures - 1));
  const jittered = capped * (1 + random());
  if (retryAfterSeconds === null) return jittered;
  return Math.max(jittered, retryAfterSeconds * (1 + 0.1 * random()));
}

/**
 * Whether 401 answers mean the server no longer knows this identity: one that says the device was
 * wiped or its token revoked for good, or 401s without a success for over an hour. One 401 alone (a
 * server restored from an old backup for a minute, a proxy misconfigured) never does.
 */
export function isIdentityLost(reason: string, firstUnauthenticatedAt: Date, now: Date): boolean {
  if (reason === "device_wiped") return true;
  return now.getTime() - firstUnauthenticatedAt.getTime() > UNAUTHENTICATED_GIVE_UP_SECONDS * 1000;
}
