import type { FieldError } from "../domain/errors";

interface TypeBoxError {
  path: string;
  message: string;
  value: unknown;
  schema: Record<string, unknown>;
}

const TYPE_NAMES: Record<string, string> = {
  string: "a string",
  integer: "an integer",
  number: "a number",
  boolean: "a boolean",
  object: "an object",
  array: "an array",
  null: "null",
};

/** Turns TypeBox's validation errors into one readable problem per field. */
export function toFieldErrors(errors: TypeBoxError[], prefix: string): FieldError[] {
  const byField = new Map<string, FieldError>();
  for (const error of errors) {
    const path = error.path
      .replace(/^\//, "")
      .replaceAll("/", ".")
      .replaceAll("~1", "/")
      .replaceAll("~0", "~");
    const field = prefix ? (path ? `${prefix}.${path}` : prefix) : path || "body";
    if (byField.has(field)) continue;
    const entry: FieldError = { field, message: describeError(error) };
    if (error.value !== undefined) entry.received = error.value;
    byField.set(field, entry);
  }
  return [...byField.values()];
}

function describeError(error: TypeBoxError): string {
  const schema = error.schema;
  if (error.value === undefined) return "is required";
  if (error.message.startsWith("Unexpected property")) return "unknown field";
  // An id of one kind of resource (IdOf): whatever is wrong with the value, say what it must be.
  if (typeof schema["x-id-of"] === "string") return `must be a ${schema["x-id-of"]} id (UUID)`;
  const variants = (schema.anyOf ?? schema.oneOf) as Record<string, unknown>[] | undefined;
  if (variants?.every((variant) => "const" in variant)) {
    return `must be one of ${variants.map((variant) => String(variant.const)).join(", ")}`;
  }
  if (Array.isArray(schema.enum)) return `must be one of ${schema.enum.join(", ")}`;
  // A value or null (policy_id: null follows the default): say what the value must be.
  const nonNull = variants?.filter((variant) => variant.type !== "null");
  if (variants && nonNull?.length === 1 && nonNull.length < variants.length && error.value !== null) {
    return `${describeError({ ...error, schema: nonNull[0] as Record<string, unknown> })} or null`;
  }
  // Elysia widens integer query parameters to integer-or-numeric-text: describe the integer's rule.
  const integerVariant = variants?.find((variant) => variant.type === "integer");
  if (integerVariant) {
    return typeof error.value === "number"
      ? describeError({ ...error, schema: integerVariant })
      : "must be an integer";
  }
  const type = schema.type as string | undefined;
  const actualType = Array.isArray(error.value)
    ? "array"
    : error.value === null
      ? "null"
      : typeof error.value;
  if (
    type &&
    !(
      type === actualType ||
      (type === "integer" && actualType === "number") ||
      (type === "number" && actualType === "number")
    )
  ) {
    return `must be ${TYPE_NAMES[type] ?? type}`;
  }
  if (type === "integer" && !Number.isInteger(error.value)) return "must be an integer";
  if (
    typeof schema.minLength === "number" &&
    typeof error.value === "string" &&
    error.value.length < schema.minLength
  ) {
    return schema.minLength === 1 ? "must not be empty" : `must be at least ${schema.minLength} characters`;
  }
  if (
    typeof schema.maxLength === "number" &&
    typeof error.value === "string" &&
    error.value.length > schema.maxLength
  ) {
    return `must be at most ${schema.maxLength} characters`;
  }
  if (typeof schema.minimum === "number" && typeof error.value === "number" && error.value < schema.minimum) {
    return `must be at least ${schema.minimum}`;
  }
  if (typeof schema.maximum === "number" && typeof error.value === "number" && error.value > schema.maximum) {
    return `must be at most ${schema.maximum}`;
  }
  if (
    typeof schema.minItems === "number" &&
    Array.isArray(error.value) &&
    error.value.length < schema.minItems
  ) {
    return `must have at least ${schema.minItems} item${schema.minItems === 1 ? "" : "s"}`;
  }
  if (
    typeof schema.maxItems === "number" &&
    Array.isArray(error.value) &&
    error.value.length > schema.maxItems
  ) {
    return `must have at most ${schema.maxItems} items`;
  }
  if (schema.uniqueItems && Array.isArray(error.value)) return "must not contain duplicates";
  if (
    typeof schema.minProperties === "number" &&
    typeof error.value === "object" &&
    error.value !== null &&
    Object.keys(error.value).length < schema.minProperties
  ) {
    const known = Object.keys((schema.properties as Record<string, unknown> | undefined) ?? {});
    return known.length > 0 ? `must contain at least one of ${known.join(", ")}` : "must not be empty";
  }
  if (schema.format === "email") return "must be an email address";
  if (schema.format === "uuid") return "must be a UUID";
  if (schema.format === "date-time") return "must be an ISO 8601 timestamp";
  if (schema.format === "uri") return "must be a URL";
  if (typeof schema.pattern === "string")
    return typeof schema.description === "string" ? `must be ${schema.description}` : "has an invalid format";
  return error.message.charAt(0).toLowerCase() + error.message.slice(1);
}
