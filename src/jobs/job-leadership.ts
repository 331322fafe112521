import type { Config } from "../config/config-schema";
import type { Db } from "../db/client";
import { releaseLease, takeOrKeepLease } from "../db/pg/coordination";
import type { Logger } from "../lib/log";

/** Who runs the scheduled jobs: this server alone (SQLite), or whichever holds the lease (PostgreSQL). */
export interface JobLeadership {
  /** Takes or keeps the right to run the jobs; whether this server has it now. Never throws. */
  check(): Promise<boolean>;
  /** Gives it up (the server stops), so that another server takes over at once. Never throws. */
  release(): Promise<void>;
  /** The server running the jobs, as this one last saw it; null before it has looked. */
  readonly leader: string | null;
}

/** A server on a SQLite file is the only one: it always runs the jobs. */
export function soleServer(name: string): JobLeadership {
  return { check: async () => true, release: async () => {}, leader: name };
}

/**
 * How long the job lease lasts unless renewed: one scan interval, and at least 2 s (it is renewed each
 * second). A leader that dies is replaced at most that long, and a tick, after its last renewal: within
 * two scan intervals of its last run.
 */
export function jobLeaseSeconds(config: Readonly<Config>): number {
  return Math.max(2, config.jobs.scan_interval_seconds);
}

/** The lease's name in job_leases: one lease covers every job. */
const JOBS_LEASE = "jobs";

/**
 * Leadership among the servers on one PostgreSQL database: a lease row in job_leases, taken by the first
 * server to find it free and kept by renewing it at every check (each second), judged by the database's
 * clock so that servers' clocks may disagree. A leader that stops renewing (killed, frozen, cut off from
 * the database) loses it when it runs out, `leaseSeconds` after its last renewal, and the next server to
 * check takes it. A check that fails (the database unreachable) counts as not leading: a server that
 * cannot reach the database could not run the jobs anyway, and another may have taken over meanwhile.
 */
export function leaseLeadership(
  db: Db,
  options: { name: string; leaseSeconds: number; log: Logger },
): JobLeadership {
  // Two processes given the same replica_name must still hold the lease apart.
  const holder = `${options.name}#${crypto.randomUUID().slice(0, 8)}`;
  let leader: string | null = null;
  let isLeader = false;
  let isFailing = false;
  return {
    async check() {
      let now: { isHeld: boolean; holder: string; term: number };
      try {
        now = await takeOrKeepLease(db, JOBS_LEASE, holder, options.leaseSeconds);
      } catch (error) {
        if (!isFailing) options.log.warn("job lease could not be taken or renewed", { error });
        isFailing = true;
        if (isLeader)
          options.log.warn("no longer running the scheduled jobs: the job lease could not be renewed");
        isLeader = false;
        return false;
      }
      isFailing = false;
      leader = now.holder.replace(/#[^#]*$/, "") || null;
      if (now.isHeld && !isLeader)
        options.log.info("running the scheduled jobs: took the job lease", { term: now.term });
      if (!now.isHeld && isLeader)
        options.log.warn("no longer running the scheduled jobs: another server holds the job lease", {
          leader,
          term: now.term,
        });
      isLeader = now.isHeld;
      return isLeader;
    },
    async release() {
      if (!isLeader) return;
      isLeader = false;
      await releaseLease(db, JOBS_LEASE, holder).catch(() => {});
    },
    get leader() {
      return leader;
    },
  };
}
