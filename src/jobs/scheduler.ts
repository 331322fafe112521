import { Cron } from "croner";
import { replicaName } from "../config/load-config";
import type { DomainDeps } from "../domain/deps";
import type { Observability } from "../lib/observability";
import type { JobLeadership } from "./job-leadership";
import { recordSharedJobRun } from "./job-runs";
import { JOBS, type Job } from "./jobs";

export interface RunningJobs {
  stop(): void;
  /** Resolves when no job run is in progress. */
  idle(): Promise<void>;
}

/**
 * Runs a job once and reports it: a log line (warn when it failed), the job metrics and the last run
 * the health check shows. Never throws: a failed run is reported and the next one is on schedule.
 */
export async function runJobOnce(deps: DomainDeps & Observability, job: Job): Promise<void> {
  const startedAt = deps.clock.now();
  const started = performance.now();
  let result: unknown;
  let failure: unknown = null;
  try {
    result = await job.run(deps);
  } catch (error) {
    failure = error;
  }
  const durationMs = performance.now() - started;
  const outcome = failure === null ? "ok" : "failed";
  deps.metrics.observeJobRun(job.id, outcome, durationMs / 1000);
  const fields = { job: job.id, outcome, duration_ms: Math.round(durationMs * 100) / 100 };
  if (failure !== null) deps.log.warn("job run", { ...fields, error: failure });
  else deps.log.info("job run", { ...fields, result: summary(result) });
  let recorded = false;
  try {
    const replica = replicaName(deps.config);
    await recordSharedJobRun(deps.db, job.id, { startedAt, durationMs, outcome, replica });
    recorded = true;
  } catch (error) {
    // This server's health check still shows the run; the others show the one before it.
    deps.log.warn("job run not recorded in the database", { job: job.id, error });
  }
  deps.activity.recordJobRun(job.id, { startedAt, durationMs, outcome, recorded });
}

/** What a job returned, when it is a count or a record of counts (rows purged, devices marked). */
function summary(result: unknown): unknown {
  if (typeof result === "number") return result;
  if (
    result &&
    typeof result === "object" &&
    Object.values(result).every((value) => typeof value === "number")
  )
    return result;
  return undefined;
}

/**
 * A just-started server answers its first requests before the jobs' first runs: a tick could otherwise
 * fall a few milliseconds after listening and run every job at once (on the benchmark's 1M-device
 * database the first tick's runs held the one thread ~11 ms, while the first requests waited).
 */
const FIRST_RUN_DELAY_MS = 2000;

/**
 * Starts every job of the one list, each on its own interval; a run never overlaps itself. One croner
 * tick a second serves them all: a job runs at the first tick FIRST_RUN_DELAY_MS after the start, then at
 * the first tick once its interval has passed since its previous run started and that run has
 * finished. One Cron per job with croner's `interval` option cost ~3 ms each at start, searching back
 * for a previous run.
 *
 * Each tick first asks `leadership` whether this server runs the jobs (job-leadership.ts): among
 * servers on one PostgreSQL database only the lease's holder does, and a server that takes the lease
 * over runs at once the jobs it has not run for their interval.
 */
export function startJobs(deps: DomainDeps & Observability, leadership: JobLeadership): RunningJobs {
  const running = new Set<Promise<unknown>>();
  const firstRunAt = performance.now() + FIRST_RUN_DELAY_MS;
  const schedule = JOBS.map((job) => {
    const intervalMs = job.intervalSeconds(deps.config) * 1000;
    return { job, intervalMs, dueAt: firstRunAt, isRunning: false };
  });
  // Ticks fall on the clock's seconds, not exactly `interval` after a run: half a second early is due.
  const TICK_TOLERANCE_MS = 500;
  const runDueJobs = () => {
    const now = performance.now();
    for (const entry of schedule) {
      if (entry.isRunning || now < entry.dueAt - TICK_TOLERANCE_MS) continue;
      entry.isRunning = true;
      entry.dueAt = now + entry.intervalMs;
      const run = runJobOnce(deps, entry.job).finally(() => {
        entry.isRunning = false;
        running.delete(run);
      });
      running.add(run);
    }
  };
  let isChecking = false;
  let isStopped = false;
  const startTicking = () =>
    // Unnamed: croner refuses a second job of the same name, and this one now starts in a timer,
    // where that refusal would be an uncaught error (two servers in one process, as tests run them).
    new Cron("* * * * * *", () => {
      if (isChecking) return;
      isChecking = true;
      void leadership.check().then((isLeader) => {
        isChecking = false;
        deps.activity.noteJobLeader(leadership.leader, isLeader);
        if (isLeader && !isStopped) runDueJobs();
      });
    });
  // The ticks start a second before the first runs are due: building croner's first schedule cost
  // ~6 ms of a cold start, before the server listened.
  let tick: Cron | null = null;
  const ticksStart = setTimeout(() => {
    tick = startTicking();
  }, FIRST_RUN_DELAY_MS - 1000);
  return {
    stop: () => {
      isStopped = true;
      clearTimeout(ticksStart);
      tick?.stop();
    },
    idle: async () => {
      await Promise.all(running);
    },
  };
}
