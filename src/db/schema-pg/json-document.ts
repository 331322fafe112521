import { customType } from "drizzle-orm/pg-core";

/**
 * A JSON document (a column the SQLite schema keeps as JSON text), stored as `json`: the text as written,
 * so an object's keys come back in the order they were written, as from SQLite (`jsonb` orders them its
 * own way, and the API would then answer a policy's or a device's facts in another order on each store).
 * Bun.sql encodes a value bound to a json parameter as JSON itself and hands json back parsed, so the
 * value passes through untouched. Drizzle's own `json` serialises it first, and PostgreSQL then stores a
 * JSON string that holds the text: reads round-trip, but no path or operator finds anything inside it.
 * `json` has no equality: compare its text (`::text`), or cast to jsonb for jsonb's operators.
 */
export const jsonDocument = customType<{ data: unknown; driverData: unknown }>({
  dataType: () => "json",
  toDriver: (value) => value,
  fromDriver: (value) => value,
});
