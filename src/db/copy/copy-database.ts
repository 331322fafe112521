import { CopyFailed, CopyRefused, firstLine } from "./copy-errors";
import type { CopyTable } from "./copy-plan";
import type { Row, Store, StoreSession, TargetStore } from "./store";
import { settleTriggerKeptValues, TRIGGER_WRITTEN_TABLES } from "./trigger-kept";

/** One table's rows in each store once the copy is done. */
export interface TableCount {
  table: string;
  source: number;
  target: number;
  /** Its rows were written by the target's triggers (and completed from the source), not copied one by one. */
  isTriggerWritten: boolean;
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

/** Called after each batch a table's copy writes: the rows copied so far, of `total`. */
export type CopyProgress = (table: string, copied: number, total: number) => void;

/**
 * Copies every row of `source` into `target`, which `openSqliteTarget`/`openPgTarget` found empty and
 * migrated. One read snapshot of the source; one transaction on the target, in which the tables are
 * written in foreign-key order, in batches as large as the target binds at once; what the triggers keep
 * is settled (trigger-kept.ts), then each table's rows are counted in both stores. Any failure, a count
 * that differs included, rolls the target's transaction back, and the error says which table.
 */
export async function copyDatabase(
  source: Store,
  target: TargetStore,
  tables: readonly CopyTable[],
  onProgress: CopyProgress = () => undefined,
): Promise<TableCount[]> {
  return await source.read((reader) =>
    target.write(async (writer) => {
      const counts: TableCount[] = [];
      for (const table of tables) {
        const total = await reader.count(table);
        const isTriggerWritten = TRIGGER_WRITTEN_TABLES.has(table.name);
        if (!isTriggerWritten) await copyTable(reader, writer, table, total, onProgress);
        counts.push({ table: table.name, source: total, target: 0, isTriggerWritten });
      }
      try {
        await settleTriggerKeptValues(reader, writer, tables);
      } catch (error) {
        if (error instanceof CopyFailed) throw error;
        throw new CopyFailed(`settling what the triggers keep failed: ${firstLine(error)}`);
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
  const batchSize = Math.max(1, Math.floor(writer.maxParameters / table.columns.length));
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
