/**
 * Whether a failure means the database cannot serve now (unreachable, shutting down or starting, a
 * statement past database.timeout_seconds) rather than a fault of the request or the code. Only the
 * PostgreSQL store fails this way; SQLite is a file in the process.
 */
import { isPgUnavailable } from "./pg/client";

export function isDatabaseUnavailable(error: unknown): boolean {
  return isPgUnavailable(error);
}
