import { sql } from "drizzle-orm";
import type { DomainDeps } from "../deps";

/** True when a trivial query succeeds. */
export function checkDatabase(deps: DomainDeps): boolean {
  try {
    deps.db.get(sql`SELECT 1`);
    return true;
  } catch {
    return false;
  }
}
