import type { Database } from "bun:sqlite";
import { foldCase } from "../lib/fold-case";

/**
 * What a migration's SQL cannot do, by migration tag: run right after its SQL, in the same
 * transaction, once (the tag is recorded with both).
 */
export const DATA_MIGRATIONS: Readonly<Record<string, (sqlite: Database) => void>> = {
  "0012_policy_name_key": keyPolicyNames,
  "0013_re2_sensitive_data_patterns": rewriteLookaheadSsnPattern,
};

/** The strict and balanced templates' social security number pattern before patterns had to be RE2. */
const LOOKAHEAD_SSN = String.raw`\b(?!000|666|9\d\d)\d{3}-(?!00)\d{2}-(?!0000)\d{4}\b`;
/** The same numbers without lookahead: an area of 001-899 but 666, a group of 01-99, a serial of 0001-9999. */
const RE2_SSN = String.raw`\b(?:00[1-9]|0[1-9]\d|[1-5]\d\d|6[0-57-9]\d|66[0-57-9]|[78]\d\d)-(?:0[1-9]|[1-9]\d)-(?:000[1-9]|00[1-9]\d|0[1-9]\d\d|[1-9]\d{3})\b`;

/**
 * Every organization's default policy (the balanced template) carried the lookahead pattern, which the
 * agents' RE2 engine cannot run and a change to the policy would be refused for. A policy whose current
 * version holds it gets a new version with the RE2 form, in its history like any change (by "system");
 * devices receive it at their next check-in. Older versions stay as they were.
 */
function rewriteLookaheadSsnPattern(sqlite: Database): void {
  const current = sqlite
    .query<{ id: string; version: number; name: string; description: string; policy_data: string }, []>(
      `SELECT p.id, p.current_version AS version, v.name, v.description, v.policy_data
         FROM policies AS p JOIN policy_versions AS v ON v.policy_id = p.id AND v.version = p.current_version`,
    )
    .all();
  const now = new Date().toISOString();
  for (const row of current) {
    const data = JSON.parse(row.policy_data) as { dlp?: { sensitive_data_patterns?: unknown[] } };
    const patterns = data.dlp?.sensitive_data_patterns;
    if (!patterns?.includes(LOOKAHEAD_SSN)) continue;
    data.dlp = {
      ...data.dlp,
      sensitive_data_patterns: patterns.map((pattern) => (pattern === LOOKAHEAD_SSN ? RE2_SSN : pattern)),
    };
    const version = row.version + 1;
    sqlite
      .query(
        `INSERT INTO policy_versions (policy_id, version, name, description, policy_data, changes, changed_by, changed_at)
         VALUES (?, ?, ?, ?, ?, ?, 'system', ?)`,
      )
      .run(
        row.id,
        version,
        row.name,
        row.description,
        JSON.stringify(data),
        JSON.stringify([
          "dlp.sensitive_data_patterns: the US social security number pattern rewritten without lookahead (patterns are RE2 syntax now); it matches the same numbers",
        ]),
        now,
      );
    sqlite
      .query("UPDATE policies SET current_version = ?, updated_at = ? WHERE id = ?")
      .run(version, now, row.id);
  }
}

/**
 * 0012 keyed policy names with SQLite's lower(), which folds ASCII case only: every name gets the key
 * the code computes (foldCase: every script, spacing and invisible characters too), oldest first. A
 * name whose key another policy of the organization already has gets its id's start appended, as the
 * SQL did for ASCII names.
 */
function keyPolicyNames(sqlite: Database): void {
  const rows = sqlite
    .query<{ id: string; organization_id: string; name: string }, []>(
      "SELECT id, organization_id, name FROM policies ORDER BY created_at, id",
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
