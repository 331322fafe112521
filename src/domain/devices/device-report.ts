import { type Static, Type } from "@sinclair/typebox";
import { ENFORCEMENT_OUTCOMES } from "../../db/schema/enums";
import { literalUnion } from "../../lib/literal-union";
import { ValidationError } from "../errors";
import { type DeviceFacts, DeviceFactsSchema } from "./evaluate-compliance";

/** The most facts one check-in reports, known and unknown together. */
export const MAX_REPORTED_FACTS = 64;
/** The longest name of a fact this server does not know. */
export const MAX_FACT_NAME_LENGTH = 64;

/** The value of a fact this server does not know: kept as reported, never judged. */
export const IgnoredFactValueSchema = Type.Union([
  Type.Boolean(),
  Type.Number(),
  Type.String({ maxLength: 200 }),
  Type.Null(),
]);

/** Facts reported that this server does not know, by name. */
export const IgnoredFactsSchema = Type.Record(Type.String(), IgnoredFactValueSchema, {
  title: "IgnoredFacts",
  description:
    "Facts the agent reported that this server does not know (a newer agent's, or a misspelled name): " +
    "kept as reported, never judged",
});

export type IgnoredFacts = Static<typeof IgnoredFactsSchema>;

/** The facts of a check-in: the known ones, and any others (kept, answered as ignored_facts). */
export const ReportedFactsSchema = Type.Object(DeviceFactsSchema.properties, {
  title: "ReportedFacts",
  additionalProperties: IgnoredFactValueSchema,
  maxProperties: MAX_REPORTED_FACTS,
  description:
    "The security facts the agent checked; a fact left out is not evaluated. A fact this server does " +
    `not know (a name up to ${MAX_FACT_NAME_LENGTH} characters; a boolean, number, string up to 200 ` +
    "characters or null) is kept, not judged, and named in the answer's ignored_facts.",
});

/** What the agent did with one policy setting. */
export const EnforcementEntrySchema = Type.Object(
  {
    setting: Type.String({
      minLength: 1,
      maxLength: 100,
      pattern: "^[a-z0-9_]+(\\.[a-z0-9_]+)*$",
      description: "A policy path (`usb.allowed`, `storage.encryption_required`) or `tunnel`",
    }),
    outcome: literalUnion(ENFORCEMENT_OUTCOMES, {
      description:
        "enforced: applied on the device; reported: only checked and reported; unsupported: cannot be " +
        "applied here (detail says why); failed: applying it failed (detail holds the error); " +
        "pending_approval: the agent did its part and the setting takes effect once the person at the " +
        "device approves it (a macOS configuration profile in System Settings)",
    }),
    detail: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })),
  },
  { title: "EnforcementEntry", additionalProperties: false },
);

export type EnforcementEntry = Static<typeof EnforcementEntrySchema>;

/** An agent's enforcement report: one entry per setting. */
export const EnforcementReportSchema = Type.Array(EnforcementEntrySchema, {
  maxItems: 64,
  description:
    "What the agent did with each setting of the policy it applied; stored whole, replacing the last " +
    "report. Shown on GET /devices/:id.",
});

const KNOWN_FACTS = Object.keys(DeviceFactsSchema.properties) as (keyof DeviceFacts)[];
const KNOWN = new Set<string>(KNOWN_FACTS);

/**
 * A check-in's facts split into those this server judges, in the schema's order, and the others, in the
 * order sent (null when there are none). 400 for an unknown fact whose name is longer than 64
 * characters.
 */
export function splitReportedFacts(reported: Record<string, unknown>): {
  known: DeviceFacts;
  ignored: IgnoredFacts | null;
} {
  const known: DeviceFacts = {};
  for (const name of KNOWN_FACTS) if (reported[name] !== undefined) known[name] = reported[name] as boolean;
  // Pairs, then fromEntries: a fact named __proto__ stays a fact.
  const ignored: [string, IgnoredFacts[string]][] = [];
  for (const name in reported) {
    if (KNOWN.has(name)) continue;
    if (name.length > MAX_FACT_NAME_LENGTH)
      throw new ValidationError("invalid request body", [
        {
          field: `facts.${name.slice(0, MAX_FACT_NAME_LENGTH)}…`,
          message: `a fact's name is at most ${MAX_FACT_NAME_LENGTH} characters`,
        },
      ]);
    ignored.push([name, reported[name] as IgnoredFacts[string]]);
  }
  return { known, ignored: ignored.length === 0 ? null : Object.fromEntries(ignored) };
}

/** An enforcement report with each entry's fields in one order, so equal reports compare equal. */
export function normalizeEnforcement(entries: readonly EnforcementEntry[]): EnforcementEntry[] {
  return entries.map(({ setting, outcome, detail }) =>
    detail === undefined ? { setting, outcome } : { setting, outcome, detail },
  );
}
