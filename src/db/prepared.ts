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
