import { type SQL, sql } from "drizzle-orm";
import type { DbOrTx } from "./client";
import { dialectOf, hasSubstring, runStatement } from "./dialect";

/**
 * Rewrites an email where it was stored as a label, in `table.column` rows matching `scope`: the whole
 * value (a user actor's label) or the end of "key name (email)" (an API key actor's label). Other text
 * that merely contains the email (a longer address) is left alone.
 */
export async function replaceEmailLabel(
  db: DbOrTx,
  table: string,
  column: string,
  scope: SQL,
  email: string,
  replacement: string,
): Promise<void> {
  const target = sql.identifier(column);
  const suffix = ` (${email})`;
  // The end of the value, written with a start position both stores read alike (no negative start).
  const end = sql`substr(${target}, length(${target}) - length(${suffix}) + 1)`;
  await runStatement(
    db,
    sql`
    UPDATE ${sql.identifier(table)} SET ${target} = CASE WHEN ${target} = ${email} THEN ${replacement}
      ELSE substr(${target}, 1, length(${target}) - length(${suffix})) || ${` (${replacement})`} END
    WHERE ${scope} AND (${target} = ${email} OR ${end} = ${suffix})`,
  );
}

/**
 * Rewrites an email inside the JSON documents of `table.column` rows matching `scope`, where it is a
 * whole string value or ends one as "key name (email)".
 */
export async function replaceEmailInJson(
  db: DbOrTx,
  table: string,
  column: string,
  scope: SQL,
  email: string,
  replacement: string,
): Promise<void> {
  const target = sql.identifier(column);
  const [whole, wholeReplacement] = [JSON.stringify(email), JSON.stringify(replacement)];
  // "key name (email)" inside a JSON string: the label's end and the closing quote.
  const [labelEnd, labelEndReplacement] = [
    JSON.stringify(` (${email})`).slice(1),
    JSON.stringify(` (${replacement})`).slice(1),
  ];
  // PostgreSQL's json column takes the rewritten text back as json.
  const isPg = dialectOf(db) === "postgresql";
  const text = isPg ? sql`${target}::text` : target;
  const replaced = sql`replace(replace(${text}, ${whole}, ${wholeReplacement}), ${labelEnd}, ${labelEndReplacement})`;
  await runStatement(
    db,
    sql`
    UPDATE ${sql.identifier(table)}
    SET ${target} = ${isPg ? sql`${replaced}::json` : replaced}
    WHERE ${scope} AND ${hasSubstring(db, text, email)}`,
  );
}
