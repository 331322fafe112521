import { customType } from "drizzle-orm/pg-core";

/**
 * A JSON document (a column the SQLite schema keeps as JSON text), stored as `jsonb`. Bun.sql encodes a
 * value bound to a jsonb parameter as JSON itself and hands jsonb back parsed, so the value passes
 * through untouched. Drizzle's own `jsonb` serialises it first, and PostgreSQL then stores a JSON
 * string that holds the text: reads round-trip, but no path or operator finds anything inside it.
 */
export const jsonDocument = customType<{ data: unknown; driverData: unknown }>({
  dataType: () => "jsonb",
  toDriver: (value) => value,
  fromDriver: (value) => value,
});
