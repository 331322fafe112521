import { connectionOf } from "../../db/client";
import type { DomainDeps } from "../deps";

/** True when a trivial query succeeds; one constant statement, prepared once (every health probe runs it). */
export function checkDatabase(deps: DomainDeps): boolean {
  try {
    connectionOf(deps.db).prepare("SELECT 1").get();
    return true;
  } catch {
    return false;
  }
}
