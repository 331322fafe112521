import { integer, primaryKey, real, sqliteTable, text } from "drizzle-orm/sqlite-core";

/**
 * Requests counted per rate-limit key in each one-minute window, shared by every server on a PostgreSQL
 * database (src/http/shared-rate-limiter.ts), so that a budget holds across replicas. A server on SQLite
 * counts in its memory (it is the only one on its file) and leaves this table empty.
 */
export const rateLimitWindows = sqliteTable(
  "rate_limit_windows",
  {
    key: text("key").notNull(),
    /** The window: minutes since the Unix epoch. */
    windowMinute: integer("window_minute").notNull(),
    count: integer("count").notNull(),
  },
  (table) => [primaryKey({ columns: [table.key, table.windowMinute] })],
);

/**
 * Who runs the scheduled jobs among the servers on a PostgreSQL database (src/jobs/job-leadership.ts):
 * one row per lease, held by one server until `expires_at` unless it renews it. Judged by the database's
 * clock, never a server's. A server on SQLite is the only one and leaves this table empty.
 */
export const jobLeases = sqliteTable("job_leases", {
  name: text("name").primaryKey(),
  holder: text("holder").notNull(),
  /** How many times the lease has changed hands: a new holder is a new term. */
  term: integer("term").notNull(),
  acquiredAt: text("acquired_at").notNull(),
  expiresAt: text("expires_at").notNull(),
});

/**
 * Each scheduled job's last run, whichever server ran it (src/jobs/scheduler.ts): the health check of
 * every replica shows the jobs as the lease's holder ran them, not only the runs of the replica asked.
 */
export const jobRuns = sqliteTable("job_runs", {
  job: text("job").primaryKey(),
  startedAt: text("started_at").notNull(),
  durationMs: real("duration_ms").notNull(),
  outcome: text("outcome", { enum: ["ok", "failed"] }).notNull(),
  /** The server that ran it (server.replica_name). */
  replica: text("replica").notNull(),
});
