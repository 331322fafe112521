import { CopyFailed, CopyRefused, firstLine } from "./copy-errors";
import type { CopyTable } from "./copy-plan";
import { checkKeptCounts } from "./kept-counts";
import type { Row, Store, StoreSession, TargetStore } from "./store";

/** One table's rows in each store once the copy is done. */
export interface TableCount {
  table: string;
  source: number;
  target: number;
}

/** The row counts of the two stores differ in at least one table; the target was rolled back. */
export class CountMismatch extends CopyFailed {
  constructor(readonly counts: readonly TableCount[]) {
    const differing = counts.filter((count) => count.source !== count.target);
    super(
      `the row counts differ in ${differing.length} table(s): ${differing
        .map((count) => `${count.table} (source ${count.source}, target ${count.target})`)
        .join(", ")}`,
    );
  }
}

/**
 * Rows per insert at the most, under the target's bind-parameter limit: PostgreSQL plans a statement of
 * 2,000 rows (its limit for `devices`) more slowly per row than one of 500 (measured: 20,000 devices and
 * 60,000 rows of their tokens and logs went in in 4.7 s in batches of 500 rows, 6.7 s in the largest).
 */
const MAX_BATCH_ROWS = 500;

/** Called after each batch a table's copy writes: the rows copied so far, of `total`. */
export type CopyProgress = (table: string, copied: number, total: number) => void;

/**
 * Copies every row of `source` into `target`, which `openSqliteTarget`/`openPgTarget` found empty and
 * migrated. One read snapshot of the source; one transaction on the target, in which the target's
 * triggers are suspended (the rows they keep are copied as they are, then checked: kept-counts.ts),
 * the tables are written in foreign-key order in batches (`MAX_BATCH_ROWS`, under the target's
 * bind-parameter limit), and each table's rows are counted in both stores. Any failure, a count that differs included, rolls the
 * target's transaction back, and the error says which table.
 */
export async function copyDatabase(
  source: Store,
  target: TargetStore,
  tables: readonly CopyTable[],
  onProgress: CopyProgress = () => undefined,
): Promise<TableCount[]> {
  return await source.read((reader) =>
    target.write(async (writer) => {
      const resumeTriggers = await writer.suspendTriggers();
      const counts: TableCount[] = [];
      for (const table of tables) {
        const total = await reader.count(table);
        await copyTable(reader, writer, table, total, onProgress);
        counts.push({ table: table.name, source: total, target: 0 });
      }
      await resumeTriggers();
      try {
        await checkKeptCounts(reader, writer, tables);
      } catch (error) {
        if (error instanceof CopyFailed) throw error;
        throw new CopyFailed(`checking what the triggers keep failed: ${firstLine(error)}`);
      }
      for (const [index, table] of tables.entries())
        (counts[index] as TableCount).target = await writer.count(table);
      if (counts.some((count) => count.source !== count.target)) throw new CountMismatch(counts);
      return counts;
    }),
  );
}

/** One table's rows, batch by batch, with the SQLite schema's columns (PostgreSQL's `rowid` is the target's own). */
async function copyTable(
  reader: StoreSession,
  writer: StoreSession,
  table: CopyTable,
  total: number,
  onProgress: CopyProgress,
): Promise<void> {
  const batchSize = Math.max(
    1,
    Math.min(MAX_BATCH_ROWS, Math.floor(writer.maxParameters / table.columns.length)),
  );
  let copied = 0;
  try {
    for await (const rows of reader.batches(table, batchSize)) {
      await writer.insert(
        table,
        rows.map((row) => pickColumns(row, table.columns)),
      );
      copied += rows.length;
      onProgress(table.name, copied, total);
    }
    if (table.identity) await writer.raiseIdentity(table, await reader.identityHighWater(table));
  } catch (error) {
    if (error instanceof CopyFailed || error instanceof CopyRefused) throw error;
    throw new CopyFailed(
      `copying ${table.name} failed after ${copied} of ${total} rows: ${firstLine(error)}`,
    );
  }
  if (total === 0) onProgress(table.name, 0, 0);
}

function pickColumns(row: Row, columns: readonly string[]): Row {
  const picked: Row = {};
  for (const column of columns) picked[column] = row[column];
  return picked;
}
