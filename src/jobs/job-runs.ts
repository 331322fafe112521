import { sql } from "drizzle-orm";
import { type DbOrTx, withTransaction } from "../db/client";
import { jobRuns } from "../db/tables";
import type { JobRunRecord } from "../lib/service-activity";

/** A job's last run as the health check shows it, with the server that ran it. */
export interface SharedJobRun extends Omit<JobRunRecord, "recorded"> {
  replica: string;
}

/**
 * Records a job's run in `job_runs`, in place of an earlier one (a run that started before the one
 * recorded, on a former lease holder, replaces nothing): every server on the database reads the jobs as
 * the lease's holder ran them (the health check of a replica that runs none).
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
        setWhere: sql`${jobRuns.startedAt} < excluded.started_at`,
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
