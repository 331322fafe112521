import { Column, getTableName, is, type Placeholder, SQL, Subquery, sql } from "drizzle-orm";
import type { Db } from "../client";

/**
 * A value built once per database handle and then reused: a hot path's prepared query, so that no SQL
 * text is built per request. A query is prepared on the connection of the handle it is built for: built
 * for `tx`, it runs inside the transaction; built for `deps.db`, on the reader, outside any.
 */
export function oncePerDatabase<T>(build: (db: Db) => T): (db: Db) => T {
  const built = new WeakMap<Db, T>();
  return (db) => {
    let value = built.get(db);
    if (value === undefined) {
      value = build(db);
      built.set(db, value);
    }
    return value;
  };
}

/**
 * A bound value the query planner does not look at. SQLite as Bun ships it (3.54) plans a statement
 * that binds a bare parameter in a join, beside an ORDER BY or as a LIMIT with the value bound, and so
 * prepares it again at every execution (3–15 µs, more than the read); as an expression (`+?`) the value
 * is only compared, and the plan is made once. For hot reads of that shape.
 */
export function unplanned(value: unknown): SQL {
  return sql`+${value}`;
}

/**
 * `LIMIT 1` as literal text, for `.limit(LIMIT_ONE)`: Drizzle binds `.limit(1)` as a parameter, which
 * SQLite as Bun ships it plans again at every execution (see unplanned), and Drizzle's `.get()` steps
 * through every row a statement returns before keeping the first. Drizzle renders any SQL object given
 * as a limit inline; its type admits only a number or a placeholder, hence the cast.
 */
export const LIMIT_ONE = sql.raw("1") as unknown as Placeholder;

/** A select's columns as Drizzle keeps them on its prepared query: where each goes, and its decoder. */
interface SelectedField {
  path: string[];
  field: unknown;
}
interface DecodingQuery<Get, All> {
  get(placeholderValues?: Record<string, unknown>): Get;
  all(placeholderValues?: Record<string, unknown>): All;
  values(placeholderValues?: Record<string, unknown>): unknown[][];
}
type Decoder = { mapFromDriverValue(value: unknown): unknown };

/**
 * A prepared select whose rows are decoded by a decoder built once for its columns, in place of Drizzle's
 * general row mapper, which finds each column's decoder and iterates its path anew for every value of
 * every row. For the reads every request makes: the device row (27 columns) took 1.6 µs to map against
 * 0.7 µs here, and several times that in a busy server, where the one general mapper meets every
 * query's shape. Values are decoded as Drizzle does (a column's mapFromDriverValue, an SQL field's
 * mapWith, null kept as null) into the same objects. A select with a table that may be missing (an
 * outer join), whose all-null side Drizzle turns into null, keeps Drizzle's mapper.
 */
export function withRowDecoder<Get, All>(
  query: DecodingQuery<Get, All>,
): Pick<DecodingQuery<Get, All>, "get" | "all"> {
  const internals = query as unknown as {
    fields?: SelectedField[];
    joinsNotNullableMap?: Record<string, boolean>;
  };
  const fields = internals.fields;
  const nullable = internals.joinsNotNullableMap;
  // Drizzle turns a nested object of a table's columns into null when all are null, unless the
  // query marks that table as never missing (its base table and inner joins): such a select keeps it.
  const isNullable = ({ path, field }: SelectedField) =>
    path.length === 2 && is(field, Column) && nullable?.[getTableName(field.table)] !== true;
  if (!fields || (nullable && fields.some(isNullable))) return query;
  const paths = fields.map(({ path }) => path);
  const decoders = fields.map(({ field }) => decoderOf(field));
  const decode = (row: unknown[]) => {
    const result: Record<string, unknown> = {};
    for (let index = 0; index < paths.length; index++) {
      const path = paths[index] as string[];
      let node = result;
      for (let depth = 0; depth < path.length - 1; depth++) {
        const key = path[depth] as string;
        if (node[key] === undefined) node[key] = {};
        node = node[key] as Record<string, unknown>;
      }
      const value = row[index];
      node[path[path.length - 1] as string] =
        value === null ? null : (decoders[index] as Decoder).mapFromDriverValue(value);
    }
    return result;
  };
  return {
    get: (placeholderValues) => {
      const row = query.values(placeholderValues)[0];
      return (row === undefined ? undefined : decode(row)) as Get;
    },
    all: (placeholderValues) => query.values(placeholderValues).map(decode) as All,
  };
}

/**
 * A hot read, prepared once per database (oncePerDatabase) with its rows decoded by withRowDecoder:
 * `build` gives the select, not yet prepared. The reads every request makes are written this way.
 */
export function preparedRead<Get, All>(
  build: (db: Db) => { prepare(): DecodingQuery<Get, All> },
): (db: Db) => Pick<DecodingQuery<Get, All>, "get" | "all"> {
  return oncePerDatabase((db) => withRowDecoder(build(db).prepare()));
}

/** The decoder Drizzle's row mapper picks for a selected field (drizzle-orm/utils.js, mapResultRow). */
function decoderOf(field: unknown): Decoder {
  // An SQL's decoder is internal to Drizzle's types.
  const sqlDecoder = (value: unknown) => (value as { decoder: Decoder }).decoder;
  if (is(field, Column)) return field;
  if (is(field, SQL)) return sqlDecoder(field);
  if (is(field, Subquery)) return sqlDecoder((field as unknown as { _: { sql: SQL } })._.sql);
  return sqlDecoder((field as SQL.Aliased).sql);
}
