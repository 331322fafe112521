/** What the health check and the metrics read of the database itself, on SQLite. */
import { connectionOf, type DbOrTx } from "../client";

/** Runs a trivial query: one constant statement, prepared once. Throws when the database cannot answer. */
export function pingDatabase(db: DbOrTx): void {
  connectionOf(db).prepare("SELECT 1").get();
}
