/**
 * Hot lookups made on the pool in the same turn of the event loop, answered by one statement.
 *
 * On PostgreSQL each statement is a round trip, and here a round trip cost more CPU than the lookup
 * itself (~90 µs across both processes for a primary-key read, sequentially, on the 2-core machine): a
 * device read was 0.22 of SQLite's rate with five of them, and still 0.30 with two. Under load, requests
 * arrive many to a turn, and each asks the same few lookups (its session, its device token, its
 * device): those asked in one turn go to PostgreSQL together, as one statement over the list of keys,
 * and each caller gets its own row. An idle server waits no longer than the rest of the turn.
 */
import type { DbOrTx } from "../client";
import { isPgTransaction, isPgUnavailable } from "./client";

/** The most keys one statement carries; more wait for the next one. */
export const MAX_COALESCED_KEYS = 256;

interface Waiting<Row> {
  resolve(row: Row | undefined): void;
  reject(error: unknown): void;
}

interface Batch<Key, Row> {
  keys: Key[];
  waiting: Waiting<Row>[];
}

/**
 * A lookup by `Key` that runs `many` once for the keys asked on the same pool in one turn. `many` is
 * given the keys in order and answers the rows found, each with `k`, the index of its key. On any
 * other handle (a transaction's), a lookup runs at once, alone, on that handle, so that it sees the
 * transaction's writes. An error of the statement is every caller's error.
 */
export function coalesced<Key, Row extends { k: number }>(
  many: (db: DbOrTx, keys: readonly Key[]) => Promise<Row[]>,
): (db: DbOrTx, key: Key) => Promise<Row | undefined> {
  const open = new WeakMap<object, Batch<Key, Row>>();
  const run = async (db: DbOrTx, batch: Batch<Key, Row>) => {
    try {
      const rows = await many(db, batch.keys);
      const byIndex = new Map<number, Row>();
      for (const row of rows) byIndex.set(row.k, row);
      for (const [index, waiting] of batch.waiting.entries()) waiting.resolve(byIndex.get(index));
    } catch (error) {
      if (batch.keys.length === 1 || isPgUnavailable(error)) {
        for (const waiting of batch.waiting) waiting.reject(error);
        return;
      }
      // One key PostgreSQL refuses (a NUL in a path parameter: text cannot hold it) must not fail the
      // others asked in the same turn: each is asked alone, and only its own asker gets its error.
      await Promise.all(
        batch.keys.map((key, index) =>
          run(db, { keys: [key], waiting: [batch.waiting[index] as Waiting<Row>] }),
        ),
      );
    }
  };
  return (db, key) =>
    new Promise((resolve, reject) => {
      if (isPgTransaction(db)) {
        Promise.resolve()
          .then(() => many(db, [key]))
          .then((rows) => resolve(rows[0]), reject);
        return;
      }
      let batch = open.get(db);
      if (!batch || batch.keys.length >= MAX_COALESCED_KEYS) {
        const next: Batch<Key, Row> = { keys: [], waiting: [] };
        open.set(db, next);
        setImmediate(() => {
          if (open.get(db) === next) open.delete(db);
          void run(db, next);
        });
        batch = next;
      }
      batch.keys.push(key);
      batch.waiting.push({ resolve, reject });
    });
}
