import { type SQL, sql } from "drizzle-orm";
import type { DbOrTx } from "./client";

/**
 * Rewrites an email where it was stored as a label, in `table.column` rows matching `scope`: the whole
 * value (a user actor's label) or the end of "key name (email)" (an API key actor's label). Other text
 * that merely contains the email (a longer address) is left alone.
 */
export function replaceEmailLabel(
  db: DbOrTx,
  table: string,
  column: string,
  scope: SQL,
  email: string,
  replacement: string,
): void {
  const target = sql.identifier(column);
  const suffix = ` (${email})`;
  db.run(sql`
    UPDATE ${sql.identifier(table)} SET ${target} = CASE WHEN ${target} = ${email} THEN ${replacement}
      ELSE substr(${target}, 1, length(${target}) - length(${suffix})) || ${` (${replacement})`} END
    WHERE ${scope} AND (${target} = ${email} OR substr(${target}, -length(${suffix})) = ${suffix})`);
}

/**
 * Rewrites an email inside the JSON documents of `table.column` rows matching `scope`, where it is a
 * whole string value or ends one as "key name (email)".
 */
export function replaceEmailInJson(
  db: DbOrTx,
  table: string,
  column: string,
  scope: SQL,
  email: string,
  replacement: string,
): void {
  const target = sql.identifier(column);
  const [whole, wholeReplacement] = [JSON.stringify(email), JSON.stringify(replacement)];
  // "key name (email)" inside a JSON string: the label's end and the closing quote.
  const [labelEnd, labelEndReplacement] = [
    JSON.stringify(` (${email})`).slice(1),
    JSON.stringify(` (${replacement})`).slice(1),
  ];
  db.run(sql`
    UPDATE ${sql.identifier(table)}
    SET ${target} = replace(replace(${target}, ${whole}, ${wholeReplacement}), ${labelEnd}, ${labelEndReplacement})
    WHERE ${scope} AND instr(${target}, ${email}) > 0`);
}
