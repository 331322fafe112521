import { type TInteger, Type } from "@sinclair/typebox";
import { ValidationError } from "../../domain/errors";

/**
 * An integer query parameter. Query values arrive as strings and Elysia only coerces `Type.Number`,
 * and the errors of its coercion lose the parameter's name; so this accepts the string and parses it
 * itself, answering 400 "invalid query parameter" that names `name` when it is not an integer in range.
 * Typed as the integer the handler receives (Elysia's own `t.Numeric` is typed the same way).
 */
export function QueryInteger(
  name: string,
  options: { minimum?: number; maximum?: number; default?: number; description?: string },
): TInteger {
  const { minimum, maximum } = options;
  const invalid = (message: string, received: unknown) =>
    new ValidationError("invalid query parameter", [{ field: name, message, received }]);
  return Type.Transform(Type.Union([Type.Integer(options), Type.String()], options))
    .Decode((value): number => {
      const number =
        typeof value === "number" ? value : /^-?\d{1,15}$/.test(value) ? Number(value) : Number.NaN;
      if (!Number.isSafeInteger(number)) throw invalid("must be an integer", value);
      if (minimum !== undefined && number < minimum) throw invalid(`must be at least ${minimum}`, value);
      if (maximum !== undefined && number > maximum) throw invalid(`must be at most ${maximum}`, value);
      return number;
    })
    .Encode((value) => value) as unknown as TInteger;
}
