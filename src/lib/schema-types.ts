import { Type } from "@sinclair/typebox";

/** Schemas of the plain values every response is made of. */
export const Uuid = Type.String({ format: "uuid", description: "UUID" });
export const Timestamp = Type.String({ format: "date-time", description: "ISO 8601 UTC timestamp" });
export const NullableTimestamp = Type.Union([Timestamp, Type.Null()]);
