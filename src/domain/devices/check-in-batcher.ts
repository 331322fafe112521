import { withTransaction } from "../../db/client";
import { endsTransaction, inSavepoint } from "../../db/lookups";
import type { DomainDeps } from "../deps";
import { UnavailableError } from "../errors";
import type { DevicePrincipal } from "./authenticate-device";
import {
  type CheckInInput,
  type CheckInOutcome,
  type CheckInResult,
  checkInDevices,
} from "./check-in-device";

/** The most check-ins written in one transaction; more wait for the next one. */
export const MAX_CHECK_INS_PER_BATCH = 256;

interface PendingCheckIn {
  caller: DevicePrincipal;
  input: CheckInInput;
  resolve: (result: CheckInResult) => void;
  reject: (error: unknown) => void;
}

export interface CheckInBatchHooks {
  /** A batch was committed: how many check-ins it held. */
  committed?(size: number): void;
  /** A batch could not be committed; each of its check-ins was answered with a 503. */
  failed?(error: unknown, size: number): void;
}

/**
 * Group commit for check-ins. A check-in waits in a queue; the check-ins that arrived together (those
 * queued before the event loop turns, at most MAX_CHECK_INS_PER_BATCH) are written in one immediate
 * transaction, in a few statements whatever their number (checkInDevices: on PostgreSQL, where each
 * statement is a round trip, a check-in at a time cost ~6 of them), and each answer is given only after
 * that transaction is committed: what an agent was told is on disk, at `synchronous=full` as before, but
 * a fleet pays one fsync per batch instead of one per device. A check-in that fails alone (a device wiped
 * meanwhile, or a statement of the batch the database refuses: then the batch is recorded again one
 * check-in at a time, each in its own savepoint) gets its own error and leaves the others; a batch that
 * cannot be committed fails each of its check-ins with a 503, and nothing of it is kept.
 *
 * While SQLite commits, the event loop is blocked and new check-ins wait in the sockets, so the busier
 * the server, the larger the next batch; an idle server writes each check-in at once (no timer).
 */
export class CheckInBatcher {
  private queue: PendingCheckIn[] = [];
  private isScheduled = false;
  private running = false;

  constructor(
    private readonly deps: DomainDeps,
    private readonly hooks: CheckInBatchHooks = {},
  ) {}

  /** Queues a check-in; resolves once the transaction that holds it is committed. */
  checkIn(caller: DevicePrincipal, input: CheckInInput): Promise<CheckInResult> {
    return new Promise((resolve, reject) => {
      this.queue.push({ caller, input, resolve, reject });
      if (!this.isScheduled && !this.running) {
        this.isScheduled = true;
        setImmediate(() => void this.flush());
      }
    });
  }

  /**
   * Writes what is queued, one batch at a time: check-ins that arrive while a batch is being written
   * wait for the next one, which then holds them all (on PostgreSQL, where a batch takes round trips,
   * batches started at every turn held ~2.5 check-ins each and ran into each other: 33 per commit and
   * no serialization failures once one is in flight at a time).
   */
  private async flush(): Promise<void> {
    this.isScheduled = false;
    if (this.running) return;
    const batch = this.queue.splice(0, MAX_CHECK_INS_PER_BATCH);
    if (batch.length === 0) return;
    this.running = true;
    try {
      await this.write(batch);
    } finally {
      this.running = false;
      if (this.queue.length > 0 && !this.isScheduled) {
        this.isScheduled = true;
        setImmediate(() => void this.flush());
      }
    }
  }

  private async write(batch: PendingCheckIn[]): Promise<void> {
    let outcomes: CheckInOutcome[] = [];
    try {
      await withTransaction(
        this.deps.db,
        async (tx) => {
          // PostgreSQL may run the transaction again (a deadlock): each run starts afresh.
          try {
            outcomes = await inSavepoint(tx, () => checkInDevices(this.deps, tx, batch));
          } catch (error) {
            // Some failures end the whole transaction (SQLite's disk full or I/O error; PostgreSQL's
            // serialization failure, run again as a whole): then nothing of the batch holds.
            if (endsTransaction(tx, error)) throw error;
            // A statement of the batch failed (a log entry the database refused, say): its writes are
            // undone, and the check-ins are recorded one at a time, so that only the one that fails fails.
            outcomes = [];
            for (const pending of batch) {
              try {
                const [outcome] = await inSavepoint(tx, () => checkInDevices(this.deps, tx, [pending]));
                outcomes.push(outcome as CheckInOutcome);
              } catch (error) {
                if (endsTransaction(tx, error)) throw error;
                outcomes.push({ ok: false, error });
              }
            }
          }
        },
        // READ COMMITTED on PostgreSQL, the batch's device rows locked as it reads them: batches of two
        // servers checking in devices side by side no longer fail each other's serializable checks.
        { isolation: "read committed" },
      );
    } catch (error) {
      const unavailable = new UnavailableError(
        "database_unavailable",
        "service unavailable",
        "the check-in could not be saved; check in again",
      );
      for (const pending of batch) pending.reject(unavailable);
      this.report(() => this.hooks.failed?.(error, batch.length));
      return;
    }
    batch.forEach((pending, index) => {
      const outcome = outcomes[index];
      if (outcome?.ok) pending.resolve(outcome.result);
      else pending.reject(outcome?.error);
    });
    this.report(() => this.hooks.committed?.(batch.length));
  }

  /** Runs a hook after the answers are settled; a failing hook never leaves a check-in unanswered. */
  private report(hook: () => void): void {
    try {
      hook();
    } catch {
      // Metrics and logs are best effort here.
    }
  }
}
