import { type Dialect, dialectOf } from "../../db/dialect";
import { pingDatabase } from "../../db/lookups";
import type { DomainDeps } from "../deps";

/** True when a trivial query succeeds (every health probe runs it). */
export async function checkDatabase(deps: DomainDeps): Promise<boolean> {
  try {
    await pingDatabase(deps.db);
    return true;
  } catch {
    return false;
  }
}

/** The database this server runs on, as health reports it. */
export function databaseStore(deps: DomainDeps): Dialect {
  return dialectOf(deps.db);
}
