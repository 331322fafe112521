/**
 * Checks a server's answer against the agent API's own schema (src/agent/answer-schemas.generated.ts,
 * from the OpenAPI document) before the agent acts on it: the types, the required fields, and the limits
 * the server itself enforces (list sizes, string lengths,
 * patterns such as a blocked domain's, enums such as a USB class). Lookups are own properties only, so a
 * `__proto__` or `constructor` key is a field like any other. An answer that does not pass changes
 * nothing on the machine and is reported with the path of its first problems.
 */
import { UnexpectedAnswer } from "./agent-api";
import { ANSWER_SCHEMAS } from "./answer-schemas.generated";

/** The JSON Schema keywords the API's answers use. */
interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  required?: readonly string[];
  items?: Schema;
  maxItems?: number;
  minItems?: number;
  uniqueItems?: boolean;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  format?: string;
  minimum?: number;
  maximum?: number;
  enum?: readonly unknown[];
  const?: unknown;
  anyOf?: readonly Schema[];
}

/** An answer the agent will not act on: what is wrong with it, each problem with its field path. */
export class InvalidAnswer extends UnexpectedAnswer {
  constructor(
    readonly answer: string,
    readonly problems: string[],
  ) {
    super(
      `the server's ${answer} answer is not valid, so nothing was changed: ${problems.slice(0, 5).join("; ")}`,
    );
  }
}

const FORMATS: Record<string, RegExp> = {
  uuid: /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i,
  "date-time": /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/,
};

const patterns = new Map<string, RegExp>();

function typeOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "array";
  if (typeof value === "number") return Number.isInteger(value) ? "integer" : "number";
  return typeof value;
}

function isType(value: unknown, type: string): boolean {
  const actual = typeOf(value);
  return actual === type || (type === "number" && actual === "integer");
}

/** Every problem of `value` against `schema`, each `path: what`. Stops listing after 20. */
function problemsOf(schema: Schema, value: unknown, path: string, problems: string[]): void {
  if (problems.length >= 20) return;
  const here = path || "(the answer)";
  if (schema.anyOf) {
    if (!schema.anyOf.some((member) => check(member, value).length === 0))
      problems.push(`${here}: ${describe(value)} is none of the allowed forms`);
    return;
  }
  if (schema.const !== undefined && value !== schema.const) {
    problems.push(`${here}: must be ${JSON.stringify(schema.const)}`);
    return;
  }
  if (schema.enum && !schema.enum.includes(value)) {
    problems.push(`${here}: ${describe(value)} is not one of ${schema.enum.join(", ")}`);
    return;
  }
  if (schema.type && !isType(value, schema.type)) {
    problems.push(
      `${here}: must be ${schema.type === "integer" ? "an integer" : `a${/^[aeiou]/.test(schema.type) ? "n" : ""} ${schema.type}`}, not ${describe(value)}`,
    );
    return;
  }
  if (typeof value === "string") {
    if (schema.minLength !== undefined && value.length < schema.minLength)
      problems.push(`${here}: shorter than ${schema.minLength} characters`);
    if (schema.maxLength !== undefined && value.length > schema.maxLength)
      problems.push(`${here}: longer than ${schema.maxLength} characters`);
    if (schema.pattern !== undefined) {
      const pattern = patterns.get(schema.pattern) ?? new RegExp(schema.pattern, "u");
      patterns.set(schema.pattern, pattern);
      if (!pattern.test(value)) problems.push(`${here}: ${describe(value)} is not of the allowed form`);
    }
    const format = schema.format ? FORMATS[schema.format] : undefined;
    if (format && !format.test(value)) problems.push(`${here}: ${describe(value)} is not a ${schema.format}`);
  }
  if (typeof value === "number") {
    if (schema.minimum !== undefined && value < schema.minimum)
      problems.push(`${here}: ${value} is below ${schema.minimum}`);
    if (schema.maximum !== undefined && value > schema.maximum)
      problems.push(`${here}: ${value} is above ${schema.maximum}`);
  }
  if (Array.isArray(value)) {
    if (schema.maxItems !== undefined && value.length > schema.maxItems)
      problems.push(`${here}: ${value.length} items, more than ${schema.maxItems}`);
    else if (schema.minItems !== undefined && value.length < schema.minItems)
      problems.push(`${here}: fewer than ${schema.minItems} items`);
    else {
      if (schema.uniqueItems && new Set(value.map((item) => JSON.stringify(item))).size !== value.length)
        problems.push(`${here}: has duplicate items`);
      if (schema.items)
        for (const [index, item] of value.entries())
          problemsOf(schema.items, item, `${path}[${index}]`, problems);
    }
  }
  if (typeOf(value) === "object") {
    const record = value as Record<string, unknown>;
    const properties = schema.properties ?? {};
    for (const name of schema.required ?? [])
      if (!Object.hasOwn(record, name)) problems.push(`${path ? `${path}.` : ""}${name}: missing`);
    for (const name of Object.keys(record)) {
      const field = `${path ? `${path}.` : ""}${name}`;
      // A field this agent does not know (a newer server's) is left alone: the agent never reads it.
      if (Object.hasOwn(properties, name))
        problemsOf(properties[name] as Schema, record[name], field, problems);
    }
  }
}

function describe(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

function check(schema: Schema, value: unknown): string[] {
  const problems: string[] = [];
  problemsOf(schema, value, "", problems);
  return problems;
}

/** The answer as its type when it is valid; else throws InvalidAnswer naming its problems. */
export function checkAnswer<T>(name: keyof typeof ANSWER_SCHEMAS, answer: T): T {
  const problems = check(ANSWER_SCHEMAS[name] as Schema, answer);
  if (problems.length > 0) throw new InvalidAnswer(name, problems);
  return answer;
}
