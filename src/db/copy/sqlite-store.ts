import { Database } from "bun:sqlite";
import { existsSync, rmSync, statSync } from "node:fs";
import { asc, count, getTableColumns, gt, like, max, sql } from "drizzle-orm";
import { type BunSQLiteDatabase, drizzle } from "drizzle-orm/bun-sqlite";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { VERSION } from "../../version";
import { connectionOf, DatabaseOpenError, openDatabase, withTransaction } from "../client";
import {
  assertUsableSchema,
  type DatabaseSchema,
  DatabaseSchemaError,
  migrateDatabase,
  readDatabaseSchema,
} from "../migrate";
import { embeddedMigrations } from "../migrations.generated";
import * as schema from "../schema";
import { acquireServeLock, DatabaseInUseError, type ServeLock } from "../serve-lock";
import { CopyRefused, firstLine } from "./copy-errors";
import { type CopyTable, columnNamed } from "./copy-plan";
import { placeholderRows, placeholderValues } from "./prepared-insert";
import { assertCurrentSchema } from "./schema-version";
import type { Row, Store, StoreSession, TargetStore } from "./store";

/** SQLite's default limit on the values one statement binds (SQLITE_MAX_VARIABLE_NUMBER since 3.32). */
const SQLITE_MAX_PARAMETERS = 32_766;
/** The key under which a batch's rows carry their rowid, read beside the columns. */
const ROWID = "__rowid";

type SqliteDb = BunSQLiteDatabase<typeof schema>;

/**
 * Opens a SQLite installation to copy from: it must exist, be served by no one (its serve lock is held
 * until `close`, so no server starts on it meanwhile) and have exactly this version's schema. Opened
 * `query_only`: the copy never writes to it.
 */
export function openSqliteSource(path: string): Store {
  if (!existsSync(path)) throw new CopyRefused(`${path} does not exist`);
  if (statSync(path).isDirectory()) throw new CopyRefused(`${path} is a folder, not a database file`);
  const lock = takeServeLock(path);
  try {
    const sqlite = openExisting(path);
    try {
      const found = readSchema(sqlite, path);
      if (found.latestTag === null)
        throw new CopyRefused(`${path} is not a Bulwark database (it has no tables)`);
      assertCurrentSchema(found, path, embeddedMigrations);
    } catch (error) {
      sqlite.close();
      throw error;
    }
    const db = drizzle({ client: sqlite, schema });
    return {
      kind: "sqlite",
      label: path,
      read: (work) => inReadTransaction(sqlite, () => work(new SqliteSession(db))),
      close: async () => {
        sqlite.close();
        lock?.release();
      },
    };
  } catch (error) {
    lock?.release();
    throw error;
  }
}

/**
 * Opens a SQLite file to copy into: a new file, or an existing database with no Bulwark rows (refused
 * otherwise, before anything is written to it), then migrated as `serve` would. Its serve lock is held
 * until `close`.
 */
export function openSqliteTarget(path: string, tables: readonly CopyTable[]): TargetStore {
  const existed = existsSync(path);
  if (existed) refuseNonEmptyFile(path, tables);
  const lock = takeServeLock(path);
  let handle: ReturnType<typeof openDatabase> | undefined;
  const removeCreated = () => {
    if (existed) return;
    for (const suffix of ["", "-wal", "-shm", "-journal", ".lock", ".pid"])
      rmSync(`${path}${suffix}`, { force: true });
  };
  try {
    handle = openDatabase({ path, synchronous: "full" });
    migrateDatabase(handle.sqlite, { label: path });
  } catch (error) {
    handle?.close();
    lock?.release();
    removeCreated();
    if (error instanceof DatabaseSchemaError) throw new CopyRefused(error.message);
    throw error;
  }
  const opened = handle;
  let isClosed = false;
  const close = async () => {
    if (isClosed) return;
    isClosed = true;
    opened.close();
    lock?.release();
  };
  return {
    kind: "sqlite",
    label: path,
    read: (work) =>
      inReadTransaction(connectionOf(opened.db), () => work(new SqliteSession(opened.db as SqliteDb))),
    write: (work) =>
      withTransaction(opened.db, async (tx) => {
        const session = new SqliteSession(tx as SqliteDb);
        // Checked again in the transaction, which holds the write lock: rows written since the first look
        // (by a command that does not take the serve lock) are not copied over.
        const appeared = await session.firstTableWithRows(tables);
        if (appeared) throw notEmpty(path, appeared);
        return await work(session);
      }),
    close,
    discard: async () => {
      await close();
      removeCreated();
      return existed
        ? `${path} holds no Bulwark rows (the transaction was rolled back)`
        : `${path} was removed`;
    },
  };
}

/** The copy's reads and writes on a SQLite database, through Drizzle and the SQLite schema. */
class SqliteSession implements StoreSession {
  readonly maxParameters = SQLITE_MAX_PARAMETERS;
  /** Inserts prepared once per table and batch size. */
  private readonly inserts = new Map<string, { run(values: Record<string, unknown>): unknown }>();

  constructor(private readonly db: SqliteDb) {}

  async count(table: CopyTable): Promise<number> {
    const [row] = await this.db.select({ rows: count() }).from(table.sqlite);
    return row?.rows ?? 0;
  }

  /** Every table, in rowid order: write order, which the target's rowids then follow. */
  async *batches(table: CopyTable, size: number): AsyncGenerator<Row[]> {
    const rowid = sql<number>`rowid`;
    let after = 0;
    for (;;) {
      const rows = (await this.db
        .select({ ...getTableColumns(table.sqlite), [ROWID]: rowid })
        .from(table.sqlite)
        .where(gt(rowid, after))
        .orderBy(asc(rowid))
        .limit(size)) as Row[];
      if (rows.length === 0) return;
      after = rows.at(-1)?.[ROWID] as number;
      yield rows;
      if (rows.length < size) return;
    }
  }

  async insert(table: CopyTable, rows: readonly Row[]): Promise<void> {
    if (rows.length === 0) return;
    const key = `${table.name}/${rows.length}`;
    let insert = this.inserts.get(key);
    if (!insert) {
      insert = this.db
        .insert(table.sqlite)
        .values(placeholderRows(table.columns, rows.length) as never)
        .prepare();
      this.inserts.set(key, insert);
    }
    await insert.run(placeholderValues(rows, table.columns, (name) => column(table, name)));
  }

  async identityHighWater(table: CopyTable): Promise<number> {
    if (!table.identity) return 0;
    const [highest] = await this.db.select({ value: max(column(table, table.identity)) }).from(table.sqlite);
    // AUTOINCREMENT's record of what it handed out, rows deleted since included.
    const [recorded] = await this.db.all<{ seq: number }>(
      sql`SELECT seq FROM sqlite_sequence WHERE name = ${table.name}`,
    );
    return Math.max(Number(highest?.value ?? 0), recorded?.seq ?? 0);
  }

  async raiseIdentity(table: CopyTable, value: number): Promise<void> {
    if (!table.identity || value <= 0) return;
    await this.db.run(
      sql`UPDATE sqlite_sequence SET seq = ${value} WHERE name = ${table.name} AND seq < ${value}`,
    );
    await this.db.run(
      sql`INSERT INTO sqlite_sequence (name, seq) SELECT ${table.name}, ${value}
          WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = ${table.name})`,
    );
  }

  /** SQLite cannot turn a trigger off: each is dropped, and created again from its own text (in this transaction). */
  async suspendTriggers(): Promise<() => Promise<void>> {
    const triggers = await this.db.all<{ name: string; sql: string }>(
      sql`SELECT name, sql FROM sqlite_master WHERE type = 'trigger' ORDER BY name`,
    );
    for (const trigger of triggers) await this.db.run(sql.raw(`DROP TRIGGER "${trigger.name}"`));
    return async () => {
      for (const trigger of triggers) await this.db.run(sql.raw(trigger.sql));
    };
  }

  async countGroups(table: CopyTable, columns: readonly string[]): Promise<Row[]> {
    const groups = Object.fromEntries(columns.map((name) => [name, column(table, name)]));
    return (await this.db
      .select({ ...groups, count: count() })
      .from(table.sqlite)
      .groupBy(...Object.values(groups))) as Row[];
  }

  async firstTableWithRows(tables: readonly CopyTable[]): Promise<string | null> {
    for (const table of tables)
      if ((await this.db.select({ one: sql`1` }).from(table.sqlite).limit(1)).length > 0) return table.name;
    return null;
  }

  async firstValueStartingWith(table: CopyTable, name: string, prefix: string): Promise<string | undefined> {
    const [row] = await this.db
      .select({ value: column(table, name) })
      .from(table.sqlite)
      .where(like(column(table, name), `${prefix}%`))
      .limit(1);
    return row?.value as string | undefined;
  }
}

function column(table: CopyTable, name: string): SQLiteColumn {
  return columnNamed(getTableColumns(table.sqlite), table, name);
}

/**
 * Runs `work` in one read transaction, so that every batch comes from one snapshot (WAL) even if
 * another process writes meanwhile.
 */
async function inReadTransaction<T>(sqlite: Database, work: () => Promise<T>): Promise<T> {
  sqlite.exec("BEGIN");
  try {
    const result = await work();
    sqlite.exec("COMMIT");
    return result;
  } catch (error) {
    if (sqlite.inTransaction) sqlite.exec("ROLLBACK");
    throw error;
  }
}

/**
 * Refuses an existing file the copy must not write into: not a SQLite database, another program's,
 * a newer Bulwark's, or one holding a row in any Bulwark table. Read without writing anything to it.
 */
function refuseNonEmptyFile(path: string, tables: readonly CopyTable[]): void {
  if (statSync(path).isDirectory()) throw new CopyRefused(`${path} is a folder, not a database file`);
  const sqlite = openExisting(path);
  try {
    const found = readSchema(sqlite, path);
    try {
      assertUsableSchema(found, path, VERSION);
    } catch (error) {
      throw new CopyRefused(firstLine(error));
    }
    const existing = new Set(
      sqlite
        .query<{ name: string }, []>("SELECT name FROM sqlite_master WHERE type = 'table'")
        .all()
        .map((row) => row.name),
    );
    const withRows = tables.find(
      (table) => existing.has(table.name) && sqlite.query(`SELECT 1 FROM "${table.name}" LIMIT 1`).get(),
    );
    if (withRows) throw notEmpty(path, withRows.name);
  } finally {
    sqlite.close();
  }
}

function notEmpty(path: string, table: string): CopyRefused {
  return new CopyRefused(
    `${path} is not empty (table ${table} has rows): copy into a new file or an empty database`,
  );
}

/**
 * An existing database file, opened without creating anything and `query_only` (SQLite opens a file it
 * may not write read-only). Closed, it folds its write-ahead log back as any last connection does.
 */
function openExisting(path: string): Database {
  try {
    const sqlite = new Database(path, { readwrite: true, create: false, strict: true });
    sqlite.exec("PRAGMA busy_timeout = 5000");
    sqlite.exec("PRAGMA query_only = ON");
    // Opening is lazy: the first read finds out whether this is a database at all.
    sqlite.query("SELECT count(*) FROM sqlite_master").get();
    return sqlite;
  } catch (error) {
    const cause = firstLine(error);
    throw new CopyRefused(
      /not a database|NOTADB/i.test(`${cause} ${(error as { code?: string }).code ?? ""}`)
        ? `${path} is not a SQLite database`
        : `cannot open ${path}: ${cause}`,
    );
  }
}

function readSchema(sqlite: Database, path: string): DatabaseSchema {
  try {
    return readDatabaseSchema(sqlite, path);
  } catch (error) {
    if (error instanceof DatabaseSchemaError) throw new CopyRefused(error.message);
    throw error;
  }
}

/**
 * The database's serve lock, so that no server starts on it during the copy; a database being served
 * is refused. A lock that cannot be made (a read-only folder: nothing can serve from there either) is
 * done without.
 */
function takeServeLock(path: string): ServeLock | null {
  try {
    return acquireServeLock(path);
  } catch (error) {
    if (error instanceof DatabaseInUseError)
      throw new CopyRefused(`${error.message.split(";")[0]}; stop it first`);
    if (error instanceof DatabaseOpenError) return null;
    throw error;
  }
}
