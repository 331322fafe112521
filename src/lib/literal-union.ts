import { type SchemaOptions, type TLiteral, type TUnion, Type } from "@sinclair/typebox";

/**
 * `Type.Union` of the literals of `values`, typed as the written-out union would be (so Elysia's handler
 * types stay exact): an enum is declared once, as a const list, and its schema built from it.
 */
export function literalUnion<const Values extends readonly [string, ...string[]]>(
  values: Values,
  options?: SchemaOptions,
): TUnion<{ -readonly [Index in keyof Values]: TLiteral<Values[Index]> }> {
  return Type.Union(
    values.map((value) => Type.Literal(value)),
    options,
  ) as unknown as TUnion<{ -readonly [Index in keyof Values]: TLiteral<Values[Index]> }>;
}
