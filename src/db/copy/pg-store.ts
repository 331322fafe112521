import type { SQL as BunSql } from "bun";
import { asc, count, getTableColumns, like, max, sql } from "drizzle-orm";
import { type BunSQLDatabase, drizzle } from "drizzle-orm/bun-sql";
import type { PgColumn } from "drizzle-orm/pg-core";
import { DatabaseSchemaError } from "../migrate";
import { embeddedPgMigrations } from "../migrations-pg.generated";
import { connectPg as connectPostgres, PgConnectError } from "../pg/connect";
import { migratePg, readPgDatabaseSchema } from "../pg/migrate-pg";
import * as schema from "../schema-pg";
import { CopyFailed, CopyRefused } from "./copy-errors";
import { type CopyTable, columnNamed } from "./copy-plan";
import { placeholderRows, placeholderValues } from "./prepared-insert";
import { assertCurrentSchema } from "./schema-version";
import type { Row, Store, StoreSession, TargetStore } from "./store";

/** The PostgreSQL protocol counts a statement's parameters in 16 bits. */
const PG_MAX_PARAMETERS = 65_535;
/** Seconds to wait for a connection before saying the server does not answer. */
const CONNECT_TIMEOUT_SECONDS = 10;

type PgDb = BunSQLDatabase<typeof schema>;
type PgTx = Parameters<Parameters<PgDb["transaction"]>[0]>[0];

/** Whether a --from/--to value names a PostgreSQL database rather than a SQLite file. */
export function isPostgresUrl(location: string): boolean {
  return /^postgres(ql)?:\/\//i.test(location);
}

/** A PostgreSQL installation to copy from: reachable, and with exactly this version's schema. */
export async function openPgSource(url: string): Promise<Store> {
  const connection = await connectPg(url);
  try {
    const found = await readSchema(connection.sql, connection.label);
    if (found.latestTag === null)
      throw new CopyRefused(`${connection.label} is not a Bulwark database (it has no tables)`);
    assertCurrentSchema(found, connection.label, embeddedPgMigrations);
  } catch (error) {
    await connection.sql.close();
    throw error;
  }
  const db = drizzle({ client: connection.sql, schema });
  return {
    kind: "postgresql",
    label: connection.label,
    // One snapshot for every batch of every table.
    read: (work) =>
      db.transaction((tx) => work(new PgSession(tx)), {
        isolationLevel: "repeatable read",
        accessMode: "read only",
      }),
    close: () => connection.sql.close(),
  };
}

/**
 * A PostgreSQL database to copy into: reachable, not another program's or a newer Bulwark's, and with
 * no row in any Bulwark table (refused before anything is written), then migrated by `migratePg`.
 */
export async function openPgTarget(url: string, tables: readonly CopyTable[]): Promise<TargetStore> {
  const connection = await connectPg(url);
  const { sql: client, label } = connection;
  try {
    const found = await readSchema(client, label);
    assertCurrentOrOlder(found, label);
    const withRows = await firstTableWithRowsIn(client, tables);
    if (withRows) throw notEmpty(label, withRows);
    await migratePg(client, { label });
  } catch (error) {
    await client.close();
    if (error instanceof DatabaseSchemaError) throw new CopyRefused(error.message);
    throw error;
  }
  const db = drizzle({ client, schema });
  return {
    kind: "postgresql",
    label,
    read: (work) =>
      db.transaction((tx) => work(new PgSession(tx)), {
        isolationLevel: "repeatable read",
        accessMode: "read only",
      }),
    write: (work) =>
      db.transaction(async (tx) => {
        // Nothing else writes these tables until the copy commits or rolls back; reads go on.
        await tx.execute(
          sql.raw(`LOCK TABLE ${tables.map((table) => `"${table.name}"`).join(", ")} IN EXCLUSIVE MODE`),
        );
        const session = new PgSession(tx);
        // Checked again under the lock: rows written since the first look are not overwritten.
        const appeared = await session.firstTableWithRows(tables);
        if (appeared) throw notEmpty(label, appeared);
        return await work(session);
      }),
    close: () => client.close(),
    // The transaction was rolled back; a failure while committing leaves its outcome unknown, so the
    // target is looked at rather than assumed empty.
    discard: async () => {
      const withRows = await firstTableWithRowsIn(client, tables).catch(() => undefined);
      await client.close();
      const emptyIt = `TRUNCATE ${tables.map((table) => table.name).join(", ")} RESTART IDENTITY`;
      if (withRows === null)
        return `${label} holds no Bulwark rows (the transaction was rolled back; its tables stay, empty)`;
      return withRows === undefined
        ? `${label} could not be looked at after the failure: if it holds Bulwark rows, empty it with ${emptyIt}`
        : `${label} holds rows after the failure (table ${withRows}): empty it with ${emptyIt}`;
    },
  };
}

function notEmpty(label: string, table: string): CopyRefused {
  return new CopyRefused(`${label} is not empty (table ${table} has rows): copy into a new, empty database`);
}

/** The copy's reads and writes on PostgreSQL, through Drizzle and the generated PostgreSQL schema. */
class PgSession implements StoreSession {
  readonly maxParameters = PG_MAX_PARAMETERS;
  /** Inserts prepared once per table and batch size. */
  private readonly inserts = new Map<
    string,
    { execute(values: Record<string, unknown>): Promise<unknown> }
  >();

  constructor(private readonly db: PgTx) {}

  async count(table: CopyTable): Promise<number> {
    const [row] = await this.db.select({ rows: count() }).from(table.pg);
    return row?.rows ?? 0;
  }

  /**
   * Keyset pages: by the `rowid` identity where the table has one (write order), else by primary key;
   * each page starts after the last row of the one before, found through the key's index.
   */
  async *batches(table: CopyTable, size: number): AsyncGenerator<Row[]> {
    const keys = table.hasRowid ? ["rowid"] : table.primaryKey;
    const keyColumns = keys.map((name) => column(table, name));
    let after: unknown[] | null = null;
    for (;;) {
      const rows = (await this.db
        .select()
        .from(table.pg)
        .where(
          after === null
            ? undefined
            : sql`(${sql.join(keyColumns, sql`, `)}) > (${sql.join(
                after.map((value, index) => sql.param(value, keyColumns[index])),
                sql`, `,
              )})`,
        )
        .orderBy(...keyColumns.map((keyColumn) => asc(keyColumn)))
        .limit(size)) as Row[];
      if (rows.length === 0) return;
      const last = rows.at(-1) as Row;
      after = keys.map((name) => last[name]);
      yield rows;
      if (rows.length < size) return;
    }
  }

  async insert(table: CopyTable, rows: readonly Row[]): Promise<void> {
    if (rows.length === 0) return;
    const key = `${table.name}/${rows.length}`;
    let insert = this.inserts.get(key);
    if (!insert) {
      // An identity's values are the source's: they are kept (`OVERRIDING SYSTEM VALUE`). A `rowid` left
      // out is numbered by its identity, in the order of the rows.
      const into = table.identity
        ? this.db.insert(table.pg).overridingSystemValue()
        : this.db.insert(table.pg);
      insert = into.values(placeholderRows(table.columns, rows.length) as never).prepare(`copy_${key}`);
      this.inserts.set(key, insert);
    }
    await insert.execute(placeholderValues(rows, table.columns, (name) => column(table, name)));
  }

  async identityHighWater(table: CopyTable): Promise<number> {
    if (!table.identity) return 0;
    const identity = column(table, table.identity);
    const [highest] = await this.db.select({ value: max(identity) }).from(table.pg);
    const [recorded] = await this.db.execute<{ value: string | null }>(
      sql`SELECT pg_sequence_last_value(pg_get_serial_sequence(${table.name}, ${identity.name})::regclass)::text AS value`,
    );
    return Math.max(Number(highest?.value ?? 0), Number(recorded?.value ?? 0));
  }

  async raiseIdentity(table: CopyTable, value: number): Promise<void> {
    if (!table.identity || value <= 0) return;
    const identity = column(table, table.identity);
    await this.db.execute(
      sql`SELECT setval(pg_get_serial_sequence(${table.name}, ${identity.name}), ${value})`,
    );
  }

  /** `DISABLE TRIGGER USER` on each table with triggers of its own (foreign keys stay checked). */
  async suspendTriggers(): Promise<() => Promise<void>> {
    const rows = await this.db.execute<{ name: string }>(
      sql`SELECT DISTINCT c.relname AS name FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid
          WHERE NOT t.tgisinternal AND c.relnamespace = current_schema()::regnamespace ORDER BY name`,
    );
    const names = [...rows].map((row) => row.name);
    for (const name of names) await this.db.execute(sql.raw(`ALTER TABLE "${name}" DISABLE TRIGGER USER`));
    return async () => {
      for (const name of names) await this.db.execute(sql.raw(`ALTER TABLE "${name}" ENABLE TRIGGER USER`));
    };
  }

  async countGroups(table: CopyTable, columns: readonly string[]): Promise<Row[]> {
    const groups = Object.fromEntries(columns.map((name) => [name, column(table, name)]));
    return (await this.db
      .select({ ...groups, count: count() })
      .from(table.pg)
      .groupBy(...Object.values(groups))) as Row[];
  }

  async firstTableWithRows(tables: readonly CopyTable[]): Promise<string | null> {
    for (const table of tables)
      if ((await this.db.select({ one: sql`1` }).from(table.pg).limit(1)).length > 0) return table.name;
    return null;
  }

  async firstValueStartingWith(table: CopyTable, name: string, prefix: string): Promise<string | undefined> {
    const [row] = await this.db
      .select({ value: column(table, name) })
      .from(table.pg)
      .where(like(column(table, name), `${prefix}%`))
      .limit(1);
    return row?.value as string | undefined;
  }
}

function column(table: CopyTable, name: string): PgColumn {
  return columnNamed(getTableColumns(table.pg), table, name);
}

/** The Bulwark tables that exist in the database (before it is migrated, some may not). */
async function firstTableWithRowsIn(client: BunSql, tables: readonly CopyTable[]): Promise<string | null> {
  const existing = new Set(
    (
      await client<{ name: string }[]>`
        SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema()`
    ).map((row) => row.name),
  );
  for (const table of tables) {
    if (!existing.has(table.name)) continue;
    const rows = await client.unsafe(`SELECT 1 FROM "${table.name}" LIMIT 1`);
    if (rows.length > 0) return table.name;
  }
  return null;
}

async function readSchema(client: BunSql, label: string) {
  try {
    return await readPgDatabaseSchema(client, label);
  } catch (error) {
    if (error instanceof DatabaseSchemaError) throw new CopyRefused(error.message);
    throw error;
  }
}

/** A target may be new, migrated by this version or an older one (migratePg brings it up); not newer. */
function assertCurrentOrOlder(found: Awaited<ReturnType<typeof readSchema>>, label: string): void {
  if (found.unknownTags.length > 0) assertCurrentSchema(found, label, embeddedPgMigrations);
}

/** Connects for the copy: a URL that does not work is a refusal (not a PostgreSQL URL) or a failure. */
async function connectPg(url: string): Promise<{ sql: BunSql; label: string }> {
  try {
    return await connectPostgres(url, { max: 4, connectionTimeout: CONNECT_TIMEOUT_SECONDS });
  } catch (error) {
    if (!(error instanceof PgConnectError)) throw error;
    throw error.message.startsWith("not a PostgreSQL URL")
      ? new CopyRefused(error.message)
      : new CopyFailed(error.message);
  }
}
