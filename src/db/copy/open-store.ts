import type { CopyTable } from "./copy-plan";
import { isPostgresUrl, openPgSource, openPgTarget } from "./pg-store";
import { openSqliteSource, openSqliteTarget } from "./sqlite-store";
import type { Store, TargetStore } from "./store";

/** The installation at `location` (a SQLite file path or a postgres:// URL), to copy from. */
export async function openSource(location: string): Promise<Store> {
  return isPostgresUrl(location) ? await openPgSource(location) : openSqliteSource(location);
}

/** The database at `location` to copy into: refused unless empty of Bulwark rows, then migrated. */
export async function openTarget(location: string, tables: readonly CopyTable[]): Promise<TargetStore> {
  return isPostgresUrl(location) ? await openPgTarget(location, tables) : openSqliteTarget(location, tables);
}
