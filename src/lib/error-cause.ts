/**
 * The error at the end of `error`'s chain of causes. Drizzle wraps a failed statement in an error whose
 * message is the whole statement and its parameters (secrets among them): the driver's or SQLite's own
 * error is its `cause`.
 */
export function innermostCause(error: unknown): unknown {
  let innermost = error;
  while (innermost instanceof Error && innermost.cause instanceof Error) innermost = innermost.cause;
  return innermost;
}

/** An error's cause in one line: the first line of the innermost cause's message. */
export function firstLine(error: unknown): string {
  const innermost = innermostCause(error);
  return (innermost instanceof Error ? innermost.message : String(innermost)).split("\n")[0] ?? "";
}
