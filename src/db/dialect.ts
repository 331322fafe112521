/**
 * The few SQL expressions the two stores write differently, each rendered for the store of the handle
 * it is built on, with the same result on both (test/db/dialect.test.ts runs each on both stores).
 * Everything else the domain writes is SQL both accept.
 */
import { type AnyColumn, is, type SQL, sql } from "drizzle-orm";
import { PgDialect } from "drizzle-orm/pg-core";

export type Dialect = "sqlite" | "postgresql";

/** Any Drizzle database or transaction handle, of either store. */
type Handle = object;

/** The store a database or transaction handle runs on (Drizzle keeps its dialect on the handle). */
export function dialectOf(db: Handle): Dialect {
  return is((db as { dialect?: unknown }).dialect, PgDialect) ? "postgresql" : "sqlite";
}

/** A JSON path as SQLite writes it (`$.a.b`) and as PostgreSQL does (`{a,b}`). */
function jsonPath(dialect: Dialect, path: readonly string[]): string {
  for (const key of path)
    if (!/^[a-z_][a-z0-9_]*$/.test(key)) throw new Error(`JSON path keys are plain names, not ${key}`);
  return dialect === "postgresql" ? `{${path.join(",")}}` : `$.${path.join(".")}`;
}

/** The text at `path` in a JSON column; null when absent. For values that are strings. */
export function jsonText(db: Handle, column: AnyColumn, path: readonly string[]): SQL<string | null> {
  const dialect = dialectOf(db);
  return dialect === "postgresql"
    ? sql<string | null>`(${column} #>> ${jsonPath(dialect, path)}::text[])`
    : sql<string | null>`json_extract(${column}, ${jsonPath(dialect, path)})`;
}

/** True where the JSON value at `path` is `true` (not a string or number that reads as one). */
export function jsonIsTrue(db: Handle, column: AnyColumn, path: readonly string[]): SQL {
  const dialect = dialectOf(db);
  return dialect === "postgresql"
    ? sql`(json_typeof(${column} #> ${jsonPath(dialect, path)}::text[]) = 'boolean' AND (${column} #>> ${jsonPath(dialect, path)}::text[]) = 'true')`
    : sql`(json_type(${column}, ${jsonPath(dialect, path)}) = 'true')`;
}

/** The smaller of two values of one type (SQLite's two-argument `min`, PostgreSQL's `least`). */
export function smallerOf(db: Handle, first: AnyColumn | SQL, second: unknown): SQL {
  return dialectOf(db) === "postgresql" ? sql`least(${first}, ${second})` : sql`min(${first}, ${second})`;
}

/** The JSON object in `column` without its top-level `keys`, the others in their order. */
export function jsonWithout(db: Handle, column: AnyColumn | SQL, keys: readonly string[]): SQL {
  for (const key of keys)
    if (!/^[a-z_][a-z0-9_]*$/.test(key)) throw new Error(`JSON keys are plain names, not ${key}`);
  return dialectOf(db) === "postgresql"
    ? sql`(SELECT coalesce(json_object_agg(entry.key, entry.value), '{}'::json) FROM json_each(${column}) AS entry WHERE entry.key NOT IN (${sql.raw(keys.map((key) => `'${key}'`).join(", "))}))`
    : sql`json_remove(${column}, ${sql.raw(keys.map((key) => `'$.${key}'`).join(", "))})`;
}

const UPPER = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";
const LOWER = "abcdefghijklmnopqrstuvwxyz";

/**
 * True where `column` contains `text`, ASCII letters compared without case and every other character
 * exactly: SQLite's LIKE, which PostgreSQL's ILIKE is not (it folds É to é too).
 */
export function containsText(db: Handle, column: AnyColumn, text: string): SQL {
  const pattern = `%${escapeLikePattern(text)}%`;
  return dialectOf(db) === "postgresql"
    ? sql`translate(${column}, ${UPPER}, ${LOWER}) LIKE translate(${pattern}, ${UPPER}, ${LOWER}) ESCAPE '\\'`
    : sql`${column} LIKE ${pattern} ESCAPE '\\'`;
}

/** `text` as a LIKE pattern that matches only itself: its `%`, `_` and `\` escaped with `\`. */
export function escapeLikePattern(text: string): string {
  return text.replace(/[\\%_]/g, (character) => `\\${character}`);
}

/** True where `column` contains `text` anywhere, exactly (case included). */
export function hasSubstring(db: Handle, column: AnyColumn | SQL | object, text: string): SQL {
  return dialectOf(db) === "postgresql"
    ? sql`strpos(${column}, ${text}) > 0`
    : sql`instr(${column}, ${text}) > 0`;
}

/** A handle's own ways to run SQL text: SQLite's `run`/`all`, PostgreSQL's `execute`. */
interface SqlRunner {
  run(query: SQL): unknown;
  all(query: SQL): unknown;
  execute(query: SQL): Promise<unknown>;
}

/** Runs a statement written as SQL that returns no rows. */
export async function runStatement(db: Handle, statement: SQL): Promise<void> {
  const runner = db as SqlRunner;
  if (dialectOf(db) === "postgresql") await runner.execute(statement);
  else await runner.run(statement);
}

/** Runs a query written as SQL and returns its rows as objects keyed by column name. */
export async function selectRows<T>(db: Handle, query: SQL): Promise<T[]> {
  const runner = db as SqlRunner;
  if (dialectOf(db) === "postgresql") return [...((await runner.execute(query)) as Iterable<T>)];
  return (await runner.all(query)) as T[];
}

/**
 * Makes the rest of the transaction on `tx` wait for any other transaction that took the same `key`,
 * until that one ends: on PostgreSQL a transaction-scoped advisory lock, so that servers on one
 * database do one thing (an organization's enrollments) one at a time; on SQLite nothing, since its one
 * writer already runs every transaction alone. The transaction must be READ COMMITTED
 * (`withTransaction(..., { isolation: "read committed" })`) for its later statements to see what the
 * one it waited for committed.
 */
export async function takeTurn(tx: Handle, key: string): Promise<void> {
  if (dialectOf(tx) === "postgresql")
    await (tx as SqlRunner).execute(sql`SELECT pg_advisory_xact_lock(hashtextextended(${key}, 0))`);
}
