import { count, desc, type InferSelectModel, type SQL } from "drizzle-orm";
import type { SQLiteColumn, SQLiteTable } from "drizzle-orm/sqlite-core";
import type { DbOrTx } from "./client";
import { firstRow } from "./first-row";

/** Which page of a list: 1-based, and how many rows a page holds. */
export interface PageRequest {
  page: number;
  pageSize: number;
}

/** One page of rows and how many rows match in all. */
export interface Page<Row> {
  data: Row[];
  total: number;
}

type NewestFirstTable = SQLiteTable & { createdAt: SQLiteColumn; id: SQLiteColumn };

/**
 * A page of `table`'s rows matching `where`, newest first (created_at, then id, so rows written in the
 * same millisecond keep one order across pages), with the number of matching rows.
 */
export async function selectNewestFirstPage<Table extends NewestFirstTable>(
  db: DbOrTx,
  table: Table,
  where: SQL | undefined,
  page: PageRequest,
): Promise<Page<InferSelectModel<Table>>> {
  const data = (await db
    .select()
    .from(table as SQLiteTable)
    .where(where)
    .orderBy(desc(table.createdAt), desc(table.id))
    .limit(page.pageSize)
    .offset((page.page - 1) * page.pageSize)) as InferSelectModel<Table>[];
  const total =
    (
      await firstRow(
        db
          .select({ value: count() })
          .from(table as SQLiteTable)
          .where(where),
      )
    )?.value ?? 0;
  return { data, total };
}
