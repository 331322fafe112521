import { Elysia } from "elysia";
import { ValidationError } from "../../domain/errors";
import { INTEGER_QUERY_PARAMETERS } from "../schemas/query-integer";

const INTEGER_TEXT = /^[+-]?\d+$/;
const UUID_TEXT = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Body and query fields that hold our own ids (`hardware_id` is the device's, kept as sent). */
const ID_FIELD = /^(id|[a-z_]+_id|[a-z_]+_ids)$/;
const FOREIGN_ID_FIELDS = new Set(["hardware_id"]);

/** Lower-cases a UUID; ids are stored in lower case and SQLite compares text case-sensitively. */
function normalizeId(value: unknown): unknown {
  if (typeof value === "string" && UUID_TEXT.test(value)) return value.toLowerCase();
  if (Array.isArray(value)) return value.map(normalizeId);
  return value;
}

export function normalizeIdFields(values: Record<string, unknown>): void {
  for (const [key, value] of Object.entries(values)) {
    if (ID_FIELD.test(key) && !FOREIGN_ID_FIELDS.has(key)) values[key] = normalizeId(value);
  }
}

/**
 * Runs after parsing and before validation:
 * - integer query parameters become numbers (their schema then checks the bounds); text that is not an
 *   integer is a 400 naming the parameter;
 * - UUIDs in path parameters and in id fields of the query and body are lower-cased, since RFC 9562
 *   UUIDs are case-insensitive on input and an upper-case id must find the same resource.
 */
export function normalizeInputPlugin() {
  return new Elysia({ name: "normalize-input" })
    .onTransform(({ query, params, body }) => {
      // Elysia leaves `query` and `params` undefined on routes that have none.
      refuseUnstorableText(params, "path parameter");
      refuseUnstorableText(query, "query parameter");
      const mutableQuery = (query ?? {}) as Record<string, unknown>;
      for (const name of INTEGER_QUERY_PARAMETERS) {
        const text = mutableQuery[name];
        if (typeof text !== "string") continue;
        if (!INTEGER_TEXT.test(text.trim())) {
          throw new ValidationError("invalid query parameter", [
            { field: name, message: "must be an integer", received: text },
          ]);
        }
        mutableQuery[name] = Number(text.trim());
      }
      normalizeIdFields(mutableQuery);
      const mutableParams = (params ?? {}) as Record<string, unknown>;
      for (const [key, value] of Object.entries(mutableParams)) mutableParams[key] = normalizeId(value);
      if (body && typeof body === "object" && !Array.isArray(body))
        normalizeIdFields(body as Record<string, unknown>);
    })
    .as("global");
}

/**
 * Path and query values no store can hold, as a 400 naming each: a NUL character (PostgreSQL's text
 * refuses U+0000, so the same request would be a 404 on SQLite and a database error on PostgreSQL) or
 * an unpaired UTF-16 surrogate. JSON bodies are checked where they are parsed (json-body.ts).
 */
function refuseUnstorableText(values: Record<string, unknown> | undefined, kind: string): void {
  if (!values) return;
  const errors = [];
  for (const [field, value] of Object.entries(values)) {
    const texts = Array.isArray(value) ? value : [value];
    if (texts.some((text) => typeof text === "string" && (text.includes("\u0000") || !text.isWellFormed())))
      errors.push({ field, message: "contains a NUL character or an unpaired UTF-16 surrogate" });
  }
  if (errors.length > 0) throw new ValidationError(`invalid ${kind}`, errors);
}
