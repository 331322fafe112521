import { type DbOrTx, withTransaction } from "../db/client";
import { jobRuns } from "../db/tables";
import type { JobRunRecord } from "../lib/service-activity";

/** A job's last run as the health check shows it, with the server that ran it. */
export interface SharedJobRun extends JobRunRecord {
  replica: string;
}

/**
 * Records a job's run in `job_runs`, in place of its previous one: every server on the database reads
 * the jobs as the lease's holder ran them (the health check of a replica that runs none).
 */
export async function recordSharedJobRun(db: DbOrTx, job: string, run: SharedJobRun): Promise<void> {
  const row = {
    job,
    startedAt: run.startedAt.toISOString(),
    durationMs: run.durationMs,
    outcome: run.outcome,
    replica: run.replica,
  };
  await withTransaction(db, async (tx) => {
    await tx
      .insert(jobRuns)
      .values(row)
      .onConflictDoUpdate({
        target: jobRuns.job,
        set: {
          startedAt: row.startedAt,
          durationMs: row.durationMs,
          outcome: row.outcome,
          replica: row.replica,
        },
      });
  });
}

/** Every job's last run as recorded in `job_runs`, by job. */
export async function readSharedJobRuns(db: DbOrTx): Promise<Map<string, SharedJobRun>> {
  const rows = await db.select().from(jobRuns);
  return new Map(
    rows.map((row) => [
      row.job,
      {
        startedAt: new Date(row.startedAt),
        durationMs: row.durationMs,
        outcome: row.outcome,
        replica: row.replica,
      },
    ]),
  );
}
