import { type FieldError, ValidationError } from "./errors";

const YEAR_ONE = "0001-01-01T00:00:00.000Z";

/**
 * `since` and `until` filters as timestamps are stored (`toISOString()`: UTC with milliseconds), so that
 * comparing strings compares instants whatever offset the caller wrote. An instant that cannot be read,
 * or falls outside the years 0000-9999 once in UTC (its ISO form then gains a sign), is a 400 naming it.
 * Device logs and the audit log filter by the same rule.
 */
export function parseInstantRange(range: { since?: string; until?: string }): {
  since?: string;
  until?: string;
} {
  const errors: FieldError[] = [];
  const parse = (field: "since" | "until", value: string | undefined) => {
    if (value === undefined) return undefined;
    const date = new Date(value);
    const iso = Number.isNaN(date.getTime()) ? undefined : date.toISOString();
    if (iso === undefined || !/^\d{4}-/.test(iso))
      errors.push({
        field,
        message: "must be a date-time between the years 0000 and 9999 (UTC)",
        received: value,
      });
    return iso;
  };
  const parsed = { since: parse("since", range.since), until: parse("until", range.until) };
  if (errors.length > 0) throw new ValidationError("invalid query parameter", errors);
  // PostgreSQL's timestamps start at the year 1 (the ISO year 0000 is 1 BC there): an instant in the
  // year 0000 is compared as the first instant of the year 1, which no stored instant precedes.
  const fromYearOne = (iso: string | undefined) => (iso?.startsWith("0000-") ? YEAR_ONE : iso);
  return { since: fromYearOne(parsed.since), until: fromYearOne(parsed.until) };
}
