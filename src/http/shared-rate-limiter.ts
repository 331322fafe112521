import type { Db } from "../db/client";
import { countWindowHits, dropWindowsBefore, type WindowHits } from "../db/pg/coordination";
import type { Logger } from "../lib/log";
import { InMemoryRateLimiter, type RateLimitDecision, type RateLimiter, WINDOW_MS } from "./rate-limiter";

/** Budgets counted by each server alone: health and metrics probes, which a load balancer sends to each. */
const PER_SERVER_PREFIXES = ["probe:"];
/** How long counting stays per server after PostgreSQL failed to count, before it is asked again. */
const FALLBACK_MS = 1000;
/** The most distinct keys one statement counts; more wait for the next one. */
const MAX_KEYS_PER_STATEMENT = 512;

interface Hit {
  key: string;
  windowMinute: number;
  limit: number;
  nowMs: number;
  resolve(decision: RateLimitDecision): void;
}

/**
 * The rate limits of servers on one PostgreSQL database, counted in the database, so that a budget of
 * 1,000 a minute is 1,000 across all of them, not 1,000 each.
 *
 * Requests counted in the same turn of the event loop go to PostgreSQL together: one statement adds
 * each key's hits to its window's row and answers its new total (src/db/pg/coordination.ts), and each
 * request gets the count it made, in the order they came. A request therefore waits for one round trip
 * shared with the others of its turn, and the count is exact whatever the number of servers.
 *
 * When PostgreSQL cannot count (unreachable, or slower than database.timeout_seconds), requests are
 * counted by this server alone for a second, then PostgreSQL is asked again: a request that needs the
 * database fails with 503 anyway, and one that does not (the health check) is not held up by the
 * limiter. Health and metrics probes are always counted per server: a load balancer probes each one.
 */
export class SharedRateLimiter implements RateLimiter {
  private readonly local = new InMemoryRateLimiter();
  private turn: Hit[] | null = null;
  private fallbackUntilMs = 0;
  private isFallingBack = false;
  private sweptMinute = 0;

  constructor(
    private readonly db: Db,
    private readonly log: Logger,
  ) {}

  hit(key: string, limitPerMinute: number, nowMs: number): RateLimitDecision | Promise<RateLimitDecision> {
    if (PER_SERVER_PREFIXES.some((prefix) => key.startsWith(prefix)) || Date.now() < this.fallbackUntilMs)
      return this.local.hit(key, limitPerMinute, nowMs);
    const windowMinute = Math.floor(nowMs / WINDOW_MS);
    return new Promise((resolve) => {
      if (!this.turn) {
        const hits: Hit[] = [];
        this.turn = hits;
        setImmediate(() => {
          this.turn = null;
          void this.count(hits);
        });
      }
      this.turn.push({ key, windowMinute, limit: limitPerMinute, nowMs, resolve });
    });
  }

  private async count(hits: Hit[]): Promise<void> {
    for (let start = 0; start < hits.length; ) {
      const batch: Hit[] = [];
      const totals = new Map<string, WindowHits>();
      for (; start < hits.length; start++) {
        const hit = hits[start] as Hit;
        const id = `${hit.windowMinute}:${hit.key}`;
        const total = totals.get(id);
        if (!total && totals.size >= MAX_KEYS_PER_STATEMENT) break;
        if (total) total.n++;
        else totals.set(id, { key: hit.key, windowMinute: hit.windowMinute, n: 1 });
        batch.push(hit);
      }
      await this.countBatch(batch, totals);
    }
  }

  private async countBatch(batch: Hit[], totals: Map<string, WindowHits>): Promise<void> {
    let rows: Awaited<ReturnType<typeof countWindowHits>>;
    try {
      // In one order on every server, so that two servers counting the same keys at once never wait
      // for each other's row locks in a circle.
      const ordered = [...totals.values()].sort(
        (a, b) => a.windowMinute - b.windowMinute || (a.key < b.key ? -1 : a.key > b.key ? 1 : 0),
      );
      rows = await countWindowHits(this.db, ordered);
    } catch (error) {
      this.fallBack(error);
      for (const hit of batch) hit.resolve(this.local.hit(hit.key, hit.limit, hit.nowMs));
      return;
    }
    if (this.isFallingBack) {
      this.isFallingBack = false;
      this.log.info("rate limits are counted in PostgreSQL again, across every server");
    }
    // Each key's hits of this batch made its last `n` counts, in the order they came.
    const next = new Map<string, number>();
    for (const row of rows) {
      const id = `${row.windowMinute}:${row.key}`;
      next.set(id, row.count - (totals.get(id)?.n ?? 0) + 1);
    }
    for (const hit of batch) {
      const id = `${hit.windowMinute}:${hit.key}`;
      const count = next.get(id) ?? 1;
      next.set(id, count + 1);
      hit.resolve(decision(hit, count));
    }
    this.sweep(batch[0]?.windowMinute ?? 0);
  }

  /** Counting goes per server for a moment; said once per outage. */
  private fallBack(error: unknown): void {
    this.fallbackUntilMs = Date.now() + FALLBACK_MS;
    if (this.isFallingBack) return;
    this.isFallingBack = true;
    this.log.warn(
      "rate limits could not be counted in PostgreSQL: each server counts its own requests until it can again",
      { error },
    );
  }

  /**
   * Once a minute, windows that ended before the previous one are forgotten (by each server; it is one
   * statement). The previous one stays for a server whose clock is a little behind this one's.
   */
  private sweep(windowMinute: number): void {
    if (windowMinute <= this.sweptMinute) return;
    this.sweptMinute = windowMinute;
    dropWindowsBefore(this.db, windowMinute - 1).catch((error: unknown) =>
      this.log.debug("old rate-limit windows not dropped", { error: String(error) }),
    );
  }
}

function decision(hit: Hit, count: number): RateLimitDecision {
  return {
    isAllowed: count <= hit.limit,
    limit: hit.limit,
    remaining: Math.max(0, hit.limit - count),
    resetAt: Math.ceil(((hit.windowMinute + 1) * WINDOW_MS) / 1000),
  };
}
