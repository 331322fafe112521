import type { Database } from "bun:sqlite";
import { foldCase } from "../lib/fold-case";

/**
 * What a migration's SQL cannot do, by migration tag: run right after its SQL, in the same
 * transaction, once (the tag is recorded with both).
 */
export const DATA_MIGRATIONS: Readonly<Record<string, (sqlite: Database) => void>> = {
  "0012_policy_name_key": foldNonAsciiPolicyNames,
};

/**
 * 0012 keyed policy names with SQLite's lower(), which folds ASCII only: names with other letters get
 * the key the code computes (foldCase), oldest first. A name whose key another policy of the
 * organization already has gets its id's start appended, as the SQL did for ASCII names.
 */
function foldNonAsciiPolicyNames(sqlite: Database): void {
  const rows = sqlite
    .query<{ id: string; organization_id: string; name: string }, []>(
      "SELECT id, organization_id, name FROM policies WHERE name GLOB '*[^ -~]*' ORDER BY created_at, id",
    )
    .all();
  // Out of the way first (a key no name folds to), so that the older of two policies keeps its name.
  for (const row of rows)
    sqlite.query("UPDATE policies SET name_key = ? WHERE id = ?").run(`\u0000${row.id}`, row.id);
  const taken = sqlite.query<{ id: string }, [string, string, string]>(
    "SELECT id FROM policies WHERE organization_id = ? AND name_key = ? AND id != ?",
  );
  for (const row of rows) {
    const isTaken = taken.get(row.organization_id, foldCase(row.name), row.id) !== null;
    const name = isTaken ? `${row.name} (${row.id.slice(0, 8)})` : row.name;
    sqlite.query("UPDATE policies SET name = ?, name_key = ? WHERE id = ?").run(name, foldCase(name), row.id);
    if (isTaken)
      sqlite
        .query(
          "UPDATE policy_versions SET name = ? WHERE policy_id = ? AND version = (SELECT current_version FROM policies WHERE id = ?)",
        )
        .run(name, row.id, row.id);
  }
}
