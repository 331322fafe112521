/** The last run of one background job. */
export interface JobRunRecord {
  startedAt: Date;
  durationMs: number;
  outcome: "ok" | "failed";
}

/**
 * What the background work last did, kept in memory for the health check: each job's last run, and
 * whether the webhook dispatcher is polling. `serve` starts both; in-process tests start neither.
 */
export class ServiceActivity {
  private readonly jobRuns = new Map<string, JobRunRecord>();
  private dispatcherRunning = false;
  private dispatcherLastPoll: Date | null = null;

  recordJobRun(jobId: string, run: JobRunRecord): void {
    this.jobRuns.set(jobId, run);
  }

  lastJobRun(jobId: string): JobRunRecord | null {
    return this.jobRuns.get(jobId) ?? null;
  }

  dispatcherStarted(): void {
    this.dispatcherRunning = true;
  }

  dispatcherStopped(): void {
    this.dispatcherRunning = false;
  }

  dispatcherPolled(at: Date): void {
    this.dispatcherLastPoll = at;
  }

  dispatcher(): { isRunning: boolean; lastPollAt: Date | null } {
    return { isRunning: this.dispatcherRunning, lastPollAt: this.dispatcherLastPoll };
  }
}
