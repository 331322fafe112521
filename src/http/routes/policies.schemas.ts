import { Type } from "@sinclair/typebox";
import { PolicyDeviceSchema } from "../../domain/policies/list-policy-devices";
import { PolicyDataInputSchema, PolicyDataSchema } from "../../domain/policies/policy-document";
import { PolicyHistoryEntrySchema, PolicyVersionSchema } from "../../domain/policies/policy-history";
import { PolicyListItemSchema, PolicySchema } from "../../domain/policies/policy-view";
import { DisplayText } from "../../lib/schema-types";
import { ErrorSchema, IdOf, Uuid } from "../schemas/common";

/** Named schemas the policy router registers, so that request bodies can refer to them in OpenAPI. */
export const POLICY_MODELS = { PolicyDataInput: PolicyDataInputSchema };

/**
 * A partial policy document in a request body. OpenAPI shows it as PolicyDataInput, but the router lets
 * any value through: the domain validator checks it, so that every problem is reported at once with its
 * dotted path (`policy_data.dlp.screenshot_allowed`) and the rules beyond types (regexes, USB ids,
 * domains, clipboard settings) are applied.
 */
function policyDataRequest(description: string) {
  return Type.Unknown({ $ref: "#/components/schemas/PolicyDataInput", description });
}

/** Unique in the organization ignoring case, spacing and invisible characters (409 policy_name_taken). */
const PolicyName = DisplayText(200, "a name of printable characters, not blank");
const PolicyDescription = Type.String({ maxLength: 2000 });

export { PolicyListItemSchema, PolicySchema };

export const CreatePolicyBody = Type.Object(
  {
    name: PolicyName,
    description: Type.Optional(PolicyDescription),
    policy_data: Type.Optional(
      policyDataRequest(
        "Settings by section; omitted sections and settings take the defaults (the balanced template)",
      ),
    ),
  },
  { additionalProperties: false },
);

export const UpdatePolicyBody = Type.Object(
  {
    name: Type.Optional(PolicyName),
    description: Type.Optional(PolicyDescription),
    policy_data: Type.Optional(
      policyDataRequest(
        "Settings to change; merged over the current version's settings (arrays are replaced)",
      ),
    ),
    expected_version: Type.Optional(
      Type.Integer({
        minimum: 1,
        description: "The version the change is based on; 409 if the policy has moved on since",
      }),
    ),
  },
  { additionalProperties: false },
);

export const SetDefaultPolicyBody = Type.Object(
  { policy_id: IdOf("policy", "A policy of the organization") },
  { additionalProperties: false },
);

export const CreateFromTemplateBody = Type.Object(
  {
    template_id: Type.String({ minLength: 1, maxLength: 100, description: "strict, balanced or byod" }),
    name: PolicyName,
    description: Type.Optional(PolicyDescription),
    customizations: Type.Optional(
      policyDataRequest("Settings that differ from the template; deep-merged over it (arrays are replaced)"),
    ),
  },
  { additionalProperties: false },
);

export const ValidatePolicyBody = Type.Object(
  { policy_data: policyDataRequest("The settings to check; omitted ones take the defaults") },
  { additionalProperties: false },
);

export const PolicyValidResultSchema = Type.Object(
  {
    valid: Type.Literal(true),
    errors: Type.Array(ErrorSchema.properties.errors.items, { maxItems: 0, description: "Always empty" }),
    policy_data: PolicyDataSchema,
  },
  { title: "PolicyValidationResult" },
);

/** 400 of POST /policies/validate: the error body, plus `valid: false` when the document was checked. */
export const PolicyInvalidResultSchema = Type.Object(
  {
    ...ErrorSchema.properties,
    valid: Type.Optional(
      Type.Literal(false, {
        description: "Present when the document was checked (absent when the body itself is malformed)",
      }),
    ),
  },
  {
    title: "PolicyValidationError",
    description: "The document is invalid: every problem is listed in errors",
  },
);

export const PolicyTemplateSchema = Type.Object(
  {
    id: Type.Union([Type.Literal("strict"), Type.Literal("balanced"), Type.Literal("byod")]),
    name: Type.String(),
    description: Type.String(),
    recommended_for: Type.Array(Type.String()),
    policy_data: PolicyDataSchema,
  },
  { title: "PolicyTemplate" },
);

export { PolicyDeviceSchema, PolicyHistoryEntrySchema, PolicyVersionSchema };

export const PolicyDeletedSchema = Type.Object({
  message: Type.String(),
  affected_devices: Type.Integer({ minimum: 0, description: "Devices that now follow the default policy" }),
  fallback_policy: Uuid,
});

export const PolicyVersionParams = Type.Object({
  id: Type.String({ description: "Policy id (UUID)" }),
  version: Type.String({ pattern: "^[1-9][0-9]{0,8}$", description: "a positive integer" }),
});
