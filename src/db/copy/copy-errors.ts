/** The copy will not run: a target that is not empty, a source this version cannot read, a bad argument. */
export class CopyRefused extends Error {}

/** The copy ran and failed; the target is left as it was found (the caller says so, or what to drop). */
export class CopyFailed extends Error {}

/**
 * An error's cause in one line. Drizzle wraps a failed statement in an error whose message is the whole
 * statement and its parameters (secrets among them): the driver's or SQLite's own error is its `cause`.
 */
export function firstLine(error: unknown): string {
  let innermost = error;
  while (innermost instanceof Error && innermost.cause instanceof Error) innermost = innermost.cause;
  return (innermost instanceof Error ? innermost.message : String(innermost)).split("\n")[0] ?? "";
}
