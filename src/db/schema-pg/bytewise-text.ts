import { customType } from "drizzle-orm/pg-core";

/**
 * Text compared and ordered byte by byte, as SQLite's default BINARY collation does: `text COLLATE "C"`.
 * A database's own collation (en_US.UTF-8, say) would order "B" after "a" and ignore punctuation, so list
 * pages and keyset anchors would come out in another order than on SQLite, and a `LIKE 'prefix%'` could not
 * use a btree index. drizzle's pg-core `text()` has no way to name a collation, so the collation is part of
 * this type's SQL name, which drizzle-kit writes into the migration as it stands.
 */
export const bytewiseText = customType<{ data: string; driverData: string }>({
  dataType: () => 'text COLLATE "C"',
});
