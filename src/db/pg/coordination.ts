/**
 * What servers on one PostgreSQL database share beyond the domain's rows: the rate-limit windows
 * (src/http/shared-rate-limiter.ts) and the job lease (src/jobs/job-leadership.ts). Each is one
 * statement, so that servers racing for a count or a lease are ordered by PostgreSQL, not by chance.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../client";
import { runStatement, selectRows } from "../dialect";

/** Requests to count: `n` more for `key` in `windowMinute`. */
export interface WindowHits {
  key: string;
  windowMinute: number;
  n: number;
}

/**
 * Adds each key's hits to its window and answers every key's total after them, in one statement: two
 * servers counting the same key at once each get their own total (the row lock orders them).
 */
export async function countWindowHits(
  db: Db,
  hits: readonly WindowHits[],
): Promise<{ key: string; windowMinute: number; count: number }[]> {
  const rows = await selectRows<{ key: string; window_minute: number; count: number }>(
    db,
    sql`
    INSERT INTO rate_limit_windows AS w (key, window_minute, count)
    SELECT h.key, h.window_minute, h.n FROM json_to_recordset(${JSON.stringify(
      hits.map((hit) => ({ key: hit.key, window_minute: hit.windowMinute, n: hit.n })),
    )}::text::json) AS h(key text, window_minute int, n int)
    ON CONFLICT (key, window_minute) DO UPDATE SET count = w.count + excluded.count
    RETURNING w.key, w.window_minute, w.count`,
  );
  return rows.map((row) => ({ key: row.key, windowMinute: row.window_minute, count: row.count }));
}

/** Forgets the windows that ended before `windowMinute`. */
export async function dropWindowsBefore(db: Db, windowMinute: number): Promise<void> {
  await runStatement(db, sql`DELETE FROM rate_limit_windows WHERE window_minute < ${windowMinute}`);
}

/** The lease as one server sees it after trying to take or keep it. */
export interface LeaseState {
  /** Whether this server holds the lease now. */
  isHeld: boolean;
  holder: string;
  term: number;
}

/**
 * Takes the lease `name` for `holder` for `seconds` of the database's clock, or keeps it: a free lease
 * (no row yet, or one whose time is up) is taken, one this holder has is renewed, one held by another
 * server until later is left alone. Answers who holds it after the statement. A new holder starts a new
 * term; a renewal keeps the term.
 */
export async function takeOrKeepLease(
  db: Db,
  name: string,
  holder: string,
  seconds: number,
): Promise<LeaseState> {
  const rows = await selectRows<{ holder: string; term: number }>(
    db,
    sql`
    INSERT INTO job_leases AS l (name, holder, term, acquired_at, expires_at)
    VALUES (${name}, ${holder}, 1, now(), now() + make_interval(secs => ${seconds}))
    ON CONFLICT (name) DO UPDATE SET
      holder = excluded.holder,
      term = CASE WHEN l.holder = excluded.holder THEN l.term ELSE l.term + 1 END,
      acquired_at = CASE WHEN l.holder = excluded.holder THEN l.acquired_at ELSE now() END,
      expires_at = excluded.expires_at
    WHERE l.holder = excluded.holder OR l.expires_at <= now()
    RETURNING l.holder, l.term`,
  );
  const taken = rows[0];
  if (taken) return { isHeld: true, holder: taken.holder, term: taken.term };
  const current = await selectRows<{ holder: string; term: number }>(
    db,
    sql`SELECT holder, term FROM job_leases WHERE name = ${name}`,
  );
  const row = current[0];
  return { isHeld: false, holder: row?.holder ?? "", term: row?.term ?? 0 };
}

/**
 * Gives the lease up (a server stopping): it runs out now, so another server takes it at its next try
 * instead of when it would have run out. The row stays, and the next holder's term follows this one's.
 */
export async function releaseLease(db: Db, name: string, holder: string): Promise<void> {
  await runStatement(
    db,
    sql`UPDATE job_leases SET expires_at = now() WHERE name = ${name} AND holder = ${holder}`,
  );
}
