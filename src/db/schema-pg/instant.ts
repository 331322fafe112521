import { customType } from "drizzle-orm/pg-core";

/** PostgreSQL's text output of a timestamptz: `2024-01-02 03:04:05.678+00` (offset hours, maybe minutes). */
const PG_TIMESTAMPTZ_TEXT = /^(\d{4}-\d\d-\d\d) (\d\d:\d\d:\d\d(?:\.\d+)?)([+-]\d\d)(?::?(\d\d))?$/;

/**
 * An instant, as the domain holds every instant: an ISO 8601 string in UTC with milliseconds
 * (`2024-01-02T03:04:05.678Z`, what `toIso` makes). Stored as `timestamp(3) with time zone`, so PostgreSQL
 * compares and indexes it as a time; written as the string (PostgreSQL parses ISO 8601) and read back as
 * the same string. Bun.sql hands a timestamptz back as a Date; a driver or query returning PostgreSQL's
 * text form is read too.
 */
export const instant = customType<{ data: string; driverData: string | Date }>({
  dataType: () => "timestamp(3) with time zone",
  toDriver: (value) => value,
  fromDriver: (value) => {
    if (value instanceof Date) return value.toISOString();
    const pgText = PG_TIMESTAMPTZ_TEXT.exec(value);
    const iso = pgText ? `${pgText[1]}T${pgText[2]}${pgText[3]}:${pgText[4] ?? "00"}` : value;
    return new Date(iso).toISOString();
  },
});
