import { customType } from "drizzle-orm/pg-core";

/** Bytes: what a SQLite `blob` (mode buffer) becomes on PostgreSQL. drizzle's pg-core has no bytea column. */
export const bytea = customType<{ data: Buffer; driverData: Buffer | Uint8Array }>({
  dataType: () => "bytea",
  fromDriver: (value) => Buffer.from(value),
});
