import { Type } from "@sinclair/typebox";

/** Schemas of the plain values every response is made of. */
export const Uuid = Type.String({ format: "uuid", description: "UUID" });
export const Timestamp = Type.String({ format: "date-time", description: "ISO 8601 UTC timestamp" });
/** Printable text without control characters, and not blank (names people give things). */
export const DisplayText = (maxLength: number, description: string) =>
  Type.String({
    minLength: 1,
    maxLength,
    pattern: "^[^\\u0000-\\u001f\\u007f]*[^\\s\\u0000-\\u001f\\u007f][^\\u0000-\\u001f\\u007f]*$",
    description,
  });
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);
