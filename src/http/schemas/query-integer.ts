import { type TInteger, Type } from "@sinclair/typebox";

/** Names of the integer query parameters; `normalizeInputPlugin` turns their text into numbers. */
export const INTEGER_QUERY_PARAMETERS = new Set<string>();

/**
 * An integer query parameter. The bounds live in this schema, which validates the number; the query
 * string's text is turned into that number before validation by `normalizeInputPlugin`, which refuses
 * text that is not an integer. (A TypeBox Transform did this before and was silently skipped in the
 * minified executable, so its bounds went unchecked there: no decode step is relied on now.)
 */
export function QueryInteger(
  name: string,
  options: { minimum: number; maximum: number; default?: number; description?: string },
): TInteger {
  INTEGER_QUERY_PARAMETERS.add(name);
  return Type.Integer(options);
}
