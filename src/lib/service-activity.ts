/** The last run of one background job. */
export interface JobRunRecord {
  startedAt: Date;
  durationMs: number;
  outcome: "ok" | "failed";
  /** Whether the run is in the database's job_runs, where every server reads it. */
  recorded: boolean;
}

/**
 * What the background work last did, kept in memory for the health check: each job's last run, and
 * whether the webhook dispatcher is polling. `serve` starts both; in-process tests start neither.
 */
export class ServiceActivity {
  private readonly jobRuns = new Map<string, JobRunRecord>();
  private dispatcherRunning = false;
  private dispatcherLastPoll: Date | null = null;
  private leader: string | null = null;
  private isLeader = false;
  private startup: { done: Promise<void>; finish: () => void } | null = null;

  /**
   * `serve` calls this before it listens: until `finishStart`, the health check answers 503 `starting`
   * and every other request waits (`started`), so nothing is answered by a half-started server (a
   * sign-in before the first admin exists would be a wrong 401).
   */
  beginStart(): void {
    let finish = () => {};
    const done = new Promise<void>((resolve) => {
      finish = resolve;
    });
    this.startup = { done, finish };
  }

  /** The start has finished (first admin, jobs, dispatcher): requests held meanwhile go on. */
  finishStart(): void {
    this.startup?.finish();
    this.startup = null;
  }

  /** True between beginStart and finishStart. */
  get isStarting(): boolean {
    return this.startup !== null;
  }

  /** Resolves once the start has finished; null when it has (the common case, checked per request). */
  started(): Promise<void> | null {
    return this.startup?.done ?? null;
  }

  /** The server running the scheduled jobs, as the scheduler last saw it (src/jobs/job-leadership.ts). */
  noteJobLeader(name: string | null, isThisServer: boolean): void {
    this.leader = name;
    this.isLeader = isThisServer;
  }

  /** Whether this server ran the scheduled jobs at the scheduler's last look. */
  get isJobLeader(): boolean {
    return this.isLeader;
  }

  /** Null until the scheduler has looked (and in-process tests, which start no scheduler). */
  jobLeader(): string | null {
    return this.leader;
  }

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
