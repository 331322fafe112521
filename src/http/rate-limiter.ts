/** The verdict for one request against one key's limit. */
export interface RateLimitDecision {
  isAllowed: boolean;
  limit: number;
  remaining: number;
  /** End of the current window, epoch seconds (X-RateLimit-Reset). */
  resetAt: number;
}

/**
 * Counts requests per key in fixed one-minute windows: in memory for the one server on a SQLite file
 * (InMemoryRateLimiter), in the database for the servers on a PostgreSQL one (SharedRateLimiter).
 */
export interface RateLimiter {
  hit(key: string, limitPerMinute: number, nowMs: number): RateLimitDecision | Promise<RateLimitDecision>;
}

export const WINDOW_MS = 60_000;

export class InMemoryRateLimiter implements RateLimiter {
  private readonly windows = new Map<string, { windowStart: number; count: number }>();
  private lastSweep = 0;

  hit(key: string, limitPerMinute: number, nowMs: number): RateLimitDecision {
    const windowStart = nowMs - (nowMs % WINDOW_MS);
    this.sweep(windowStart);
    let entry = this.windows.get(key);
    if (!entry || entry.windowStart !== windowStart) {
      entry = { windowStart, count: 0 };
      this.windows.set(key, entry);
    }
    entry.count += 1;
    return {
      isAllowed: entry.count <= limitPerMinute,
      limit: limitPerMinute,
      remaining: Math.max(0, limitPerMinute - entry.count),
      resetAt: Math.ceil((windowStart + WINDOW_MS) / 1000),
    };
  }

  /** Drops finished windows once per window, so memory follows the number of active callers. */
  private sweep(currentWindowStart: number): void {
    if (this.lastSweep === currentWindowStart) return;
    this.lastSweep = currentWindowStart;
    for (const [key, entry] of this.windows) {
      if (entry.windowStart < currentWindowStart) this.windows.delete(key);
    }
  }
}
