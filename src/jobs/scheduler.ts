import { Cron } from "croner";
import type { DomainDeps } from "../domain/deps";
import { JOBS } from "./jobs";

export interface RunningJobs {
  stop(): void;
  /** Resolves when no job run is in progress. */
  idle(): Promise<void>;
}

/** Starts every job of the one list, each on its own interval; a run never overlaps itself. */
export function startJobs(deps: DomainDeps): RunningJobs {
  const running = new Set<Promise<unknown>>();
  const crons = JOBS.map((job) => {
    const seconds = job.intervalSeconds(deps.config);
    // Croner checks every second and lets `interval` space the runs, so any number of seconds works.
    return new Cron("* * * * * *", { protect: true, name: job.id, interval: seconds }, async () => {
      const run = (async () => {
        try {
          await job.run(deps);
        } catch (error) {
          console.error(`job ${job.id} failed:`, error);
        }
      })();
      running.add(run);
      await run;
      running.delete(run);
    });
  });
  return {
    stop: () => {
      for (const cron of crons) cron.stop();
    },
    idle: async () => {
      await Promise.all(running);
    },
  };
}
