import { type Placeholder, type SQL, sql } from "drizzle-orm";
import type { Db } from "./client";

/**
 * A value built once per database and then reused: a hot path's prepared query, so that no SQL text is
 * built per request. A query prepared on the database runs inside whatever transaction the connection
 * is in (one connection, statements run synchronously), so domain functions run it from inside a
 * transaction too.
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
