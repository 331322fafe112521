/** Reads that see one snapshot, on SQLite. */
import type { DbOrTx } from "../client";
import { connectionOf } from "../client";

/**
 * Runs `work`, a handful of reads, in one read transaction, so that they see one snapshot and take the
 * WAL read lock once: outside a transaction every statement takes and drops it (~2.5 µs each here, more
 * than an indexed lookup). Inside a transaction already, `work` just runs in it. The handle is the
 * reader, which is query_only: a read of another request that lands between `work`'s awaits runs in the
 * same read transaction, which changes nothing for it.
 */
export async function readTogether<T>(db: DbOrTx, work: () => Promise<T>): Promise<T> {
  const sqlite = connectionOf(db);
  if (sqlite.inTransaction) return await work();
  sqlite.prepare("BEGIN DEFERRED").run();
  try {
    const result = await work();
    if (sqlite.inTransaction) sqlite.prepare("COMMIT").run();
    return result;
  } catch (error) {
    if (sqlite.inTransaction) sqlite.prepare("ROLLBACK").run();
    throw error;
  }
}
