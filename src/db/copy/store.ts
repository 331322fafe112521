import type { CopyTable } from "./copy-plan";

/** A row as Drizzle decodes it: the schema's JS property names, values as the domain holds them. */
export type Row = Record<string, unknown>;

/** What the copy does on one store: on a read-only view of the source, or in the target's transaction. */
export interface StoreSession {
  /** The most values one statement may bind. */
  readonly maxParameters: number;
  count(table: CopyTable): Promise<number>;
  /**
   * The table's rows in batches of up to `size`, in write order (rowid) where the store has it and the
   * domain relies on it, else by primary key. Each row holds at least the SQLite schema's columns.
   */
  batches(table: CopyTable, size: number): AsyncGenerator<Row[]>;
  /** Inserts rows of the SQLite schema's columns; an identity column's values are kept. */
  insert(table: CopyTable, rows: readonly Row[]): Promise<void>;
  /** The highest value the table's identity column has handed out (0 for none), kept or not. */
  identityHighWater(table: CopyTable): Promise<number>;
  /** Makes the identity column's next value greater than `value`. */
  raiseIdentity(table: CopyTable, value: number): Promise<void>;
  /**
   * Turns the database's own triggers off until the returned function turns them back on, within the
   * transaction: the rows they would write are copied as the source holds them.
   */
  suspendTriggers(): Promise<() => Promise<void>>;
  /** The table's rows counted by the given columns: one row per group, those columns and `count`. */
  countGroups(table: CopyTable, columns: readonly string[]): Promise<Row[]>;
  /** The first of `tables` that holds a row, or null. */
  firstTableWithRows(tables: readonly CopyTable[]): Promise<string | null>;
  /** One value of `column` (a JS property name) that starts with `prefix`, if any row has one. */
  firstValueStartingWith(table: CopyTable, column: string, prefix: string): Promise<string | undefined>;
}

/** A database the copy reads or writes, opened and checked. */
export interface Store {
  readonly kind: "sqlite" | "postgresql";
  /** How messages name it (a PostgreSQL URL without its password). */
  readonly label: string;
  /** Runs `work` on one consistent, read-only view of the store. */
  read<T>(work: (session: StoreSession) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/** The store copied into: migrated, found empty, written in one transaction. */
export interface TargetStore extends Store {
  /** Runs `work` in one transaction: committed when it resolves, rolled back when it throws. */
  write<T>(work: (session: StoreSession) => Promise<T>): Promise<T>;
  /**
   * After a failed copy: closes the store, removes what the copy created (a new SQLite file and its
   * companions), and says in a sentence what the target holds now.
   */
  discard(): Promise<string>;
}
