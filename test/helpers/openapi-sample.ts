/** Values built from our OpenAPI document's schemas, for tests that derive requests from it. */
export type Schema = Record<string, any>;

export interface OpenApiDocument {
  paths: Record<string, Record<string, any>>;
  components?: { schemas?: Record<string, Schema> };
}

/** Follows `$ref`s into the document's components. */
export function resolveSchema(document: OpenApiDocument, schema: Schema | undefined): Schema {
  let current = schema ?? {};
  for (let hops = 0; current.$ref && hops < 10; hops++) {
    const name = String(current.$ref).split("/").at(-1) ?? "";
    current = document.components?.schemas?.[name] ?? {};
  }
  return current;
}

/**
 * A value the schema accepts, as far as the document says: defaults, the first enum value, required
 * properties only. `valueFor` supplies values the document cannot know (real ids, a valid token).
 */
export function sampleValue(
  document: OpenApiDocument,
  raw: Schema,
  valueFor: (name: string, schema: Schema) => unknown = () => undefined,
  name = "",
): unknown {
  const schema = resolveSchema(document, raw);
  const supplied = valueFor(name, schema);
  if (supplied !== undefined) return supplied;
  if ("const" in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  const variants = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(variants))
    return sampleValue(document, variants.find((variant) => variant.type !== "null") ?? {}, valueFor, name);
  if ("default" in schema) return schema.default;
  switch (schema.type) {
    case "string": {
      if (schema.format === "uuid") return crypto.randomUUID();
      if (schema.format === "date-time") return new Date().toISOString();
      if (schema.format === "email") return `sample-${crypto.randomUUID().slice(0, 8)}@example.com`;
      if (schema.format === "uri") return "http://127.0.0.1:9/hook";
      return "x".repeat(Math.max(Number(schema.minLength ?? 1), 16));
    }
    case "integer":
    case "number":
      return schema.minimum ?? 1;
    case "boolean":
      return true;
    case "array":
      return Array.from({ length: Number(schema.minItems ?? 0) }, () =>
        sampleValue(document, schema.items ?? {}, valueFor),
      );
    case "object": {
      const value: Record<string, unknown> = {};
      for (const key of schema.required ?? [])
        value[key] = sampleValue(document, schema.properties?.[key] ?? {}, valueFor, key);
      // `minProperties` (an update naming at least one field): fill in the first optional ones.
      for (const key of Object.keys(schema.properties ?? {})) {
        if (Object.keys(value).length >= Number(schema.minProperties ?? 0)) break;
        value[key] = sampleValue(document, schema.properties[key], valueFor, key);
      }
      return value;
    }
    default:
      return "sample";
  }
}

/** `schema` with every `$ref` into the document's components replaced by the component itself. */
export function dereference(document: OpenApiDocument, schema: unknown, depth = 0): any {
  if (Array.isArray(schema)) return schema.map((item) => dereference(document, item, depth));
  if (!schema || typeof schema !== "object" || depth > 20) return schema;
  const { $ref, ...rest } = schema as Schema;
  const base = typeof $ref === "string" ? { ...resolveSchema(document, { $ref }), ...rest } : rest;
  return Object.fromEntries(
    Object.entries(base).map(([key, value]) => [key, dereference(document, value, depth + 1)]),
  );
}
