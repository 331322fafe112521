import { type Dialect, dialectOf } from "../../db/dialect";
import { pingDatabase } from "../../db/lookups";
import { isDatabaseUnavailable } from "../../db/unavailable";
import { firstLine, innermostCause } from "../../lib/error-cause";
import type { DomainDeps } from "../deps";
import { UnavailableError } from "../errors";

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

/**
 * What a failure of the database itself (PostgreSQL unreachable, shutting down or starting, a statement
 * past database.timeout_seconds) answers: 503 database_unavailable, with the driver's words for the log
 * only. Null for any other failure, which stays the logged 500 it is.
 */
export function databaseUnavailableError(error: unknown): UnavailableError | null {
  if (!isDatabaseUnavailable(error)) return null;
  const unavailable = new UnavailableError(
    "database_unavailable",
    "service unavailable",
    "the database could not be reached or did not answer in time; try again",
  );
  unavailable.logDetail = innermostMessage(error);
  return unavailable;
}

/** The first line of the innermost cause's message, with its code: what the driver said. */
function innermostMessage(error: unknown): string {
  const code = (innermostCause(error) as { code?: unknown } | null)?.code;
  const message = firstLine(error);
  return typeof code === "string" ? `${code}: ${message}` : message;
}
