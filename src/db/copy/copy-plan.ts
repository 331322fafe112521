import { type Column, getTableColumns, getTableName, is } from "drizzle-orm";
import { getTableConfig as getPgTableConfig, PgTable } from "drizzle-orm/pg-core";
import { getTableConfig, SQLiteInteger, SQLiteTable } from "drizzle-orm/sqlite-core";
import * as sqliteSchema from "../schema";
import { PG_ROWID_TABLES } from "../schema/pg-overrides";
import * as pgSchema from "../schema-pg";

/** One table as the copy sees it: its SQL name and its definition in each store's schema. */
export interface CopyTable {
  /** The SQL name (`device_logs`). */
  name: string;
  sqlite: SQLiteTable;
  pg: PgTable;
  /** The JS property names of the SQLite schema's columns: what is read and written (PostgreSQL's `rowid` is not). */
  columns: readonly string[];
  /** The JS property names of the primary key's columns, in order. */
  primaryKey: readonly string[];
  /**
   * The column of an `integer primary key autoincrement` (a PostgreSQL identity), whose values are kept,
   * and whose high-water mark is carried over so that a value is never handed out twice.
   */
  identity: string | null;
  /**
   * The domain orders this table's rows by SQLite's `rowid` (write order; a real identity column on
   * PostgreSQL): the rows are read and written in that order, so the target numbers them in the same order.
   */
  hasRowid: boolean;
}

/**
 * Every table of the schema, parents before children: ordered by the foreign keys that drizzle's
 * `getTableConfig` reads from the SQLite schema (the one hand-written schema; the PostgreSQL one is
 * generated from it with the same export names), ties in the schema's order. Inserted in this order,
 * every row finds the rows it references already there.
 */
export function copyPlan(): CopyTable[] {
  const tables = Object.entries(sqliteSchema).flatMap(([key, table]) =>
    is(table, SQLiteTable) ? [describeTable(key, table)] : [],
  );
  const byName = new Map(tables.map((table) => [table.name, table]));
  const ordered: CopyTable[] = [];
  const placed = new Set<string>();
  const visiting = new Set<string>();
  const place = (table: CopyTable) => {
    if (placed.has(table.name)) return;
    if (visiting.has(table.name))
      throw new Error(`the schema's foreign keys form a cycle through ${table.name}: no insert order exists`);
    visiting.add(table.name);
    for (const parent of parentsOf(table.sqlite)) {
      const parentTable = byName.get(parent);
      // A table referencing itself finds its parents in write order (rowid), which is the order read.
      if (parentTable && parent !== table.name) place(parentTable);
    }
    visiting.delete(table.name);
    placed.add(table.name);
    ordered.push(table);
  };
  for (const table of tables) place(table);
  return ordered;
}

/** The tables a table's foreign keys reference. */
function parentsOf(table: SQLiteTable): string[] {
  return getTableConfig(table).foreignKeys.map((foreignKey) =>
    getTableName(foreignKey.reference().foreignTable),
  );
}

function describeTable(key: string, table: SQLiteTable): CopyTable {
  const config = getTableConfig(table);
  const pg = (pgSchema as Record<string, unknown>)[key];
  if (!is(pg, PgTable) || getPgTableConfig(pg).name !== config.name)
    throw new Error(
      `src/db/schema-pg has no table ${key} (${config.name}): regenerate it (npm run db:generate)`,
    );
  const propertyOf = new Map(
    Object.entries(getTableColumns(table)).map(([property, column]) => [column.name, property]),
  );
  const property = (name: string) => {
    const found = propertyOf.get(name);
    if (!found) throw new Error(`${config.name}.${name} has no property in the schema`);
    return found;
  };
  const primaryKey =
    config.primaryKeys[0]?.columns.map((column) => property(column.name)) ??
    config.columns.filter((column) => column.primary).map((column) => property(column.name));
  const identity = config.columns.find((column) => is(column, SQLiteInteger) && column.autoIncrement);
  return {
    name: config.name,
    sqlite: table,
    pg,
    columns: [...propertyOf.values()],
    primaryKey,
    identity: identity ? property(identity.name) : null,
    hasRowid: PG_ROWID_TABLES.includes(config.name),
  };
}

/** A column of `table`'s definition in one store's schema (`getTableColumns(table.pg)`), by JS property name. */
export function columnNamed<C extends Column>(columns: Record<string, C>, table: CopyTable, name: string): C {
  const found = columns[name];
  if (!found) throw new Error(`${table.name} has no column ${name}`);
  return found;
}
