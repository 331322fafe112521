/**
 * What the domain queries: every table of the schema, for the store this process runs on, and the
 * enumerations. Domain code imports tables from here, never from `./schema` (SQLite's definition) or
 * `./schema-pg` (PostgreSQL's), so the same query runs on either store: `useTablesOf` points every
 * binding at the PostgreSQL tables when the process opens a PostgreSQL database (src/db/pg/client.ts).
 * The two stores' tables hold the same values (test/db/dialect.test.ts), so the bindings keep the SQLite
 * types. A table read into a module-level constant keeps the store it had then: read them in functions.
 */
import { setLiveTables } from "./schema-pg/live-tables";

export * from "./schema/enums";
export * from "./schema-pg/live-tables";

let current: "sqlite" | "postgresql" = "sqlite";

/**
 * Points the tables at `store`'s. A process runs on one store: switching back and forth would change
 * the tables under queries of the other store, so a second, different store is refused.
 */
export function useTablesOf(store: "sqlite" | "postgresql"): void {
  if (store === current) return;
  if (current === "postgresql") throw new Error("this process already runs on PostgreSQL");
  setLiveTables(store);
  current = store;
}

/** The store whose tables the domain queries. */
export function tablesStore(): "sqlite" | "postgresql" {
  return current;
}
