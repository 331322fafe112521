import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { createPolicy, createPolicyFromTemplate } from "../../domain/policies/create-policy";
import { deletePolicy } from "../../domain/policies/delete-policy";
import { getDefaultPolicy, getPolicy } from "../../domain/policies/get-policy";
import { listPolicies } from "../../domain/policies/list-policies";
import { listPolicyDevices } from "../../domain/policies/list-policy-devices";
import { getPolicyVersion, listPolicyHistory } from "../../domain/policies/policy-history";
import { POLICY_TEMPLATES } from "../../domain/policies/policy-templates";
import { setDefaultPolicy } from "../../domain/policies/set-default-policy";
import { updatePolicy } from "../../domain/policies/update-policy";
import { validateSubmittedPolicyData } from "../../domain/policies/validate-policy-document";
import type { AppDeps } from "../app-deps";
import { PolicyDocumentInvalidError } from "../plugins/error-handler";
import type { securityPlugin } from "../plugins/security";
import { errorResponses, IdParams, PageQuery, Paginated, pageOf, paginate } from "../schemas/common";
import {
  CreateFromTemplateBody,
  CreatePolicyBody,
  POLICY_MODELS,
  PolicyDeletedSchema,
  PolicyDeviceSchema,
  PolicyHistoryEntrySchema,
  PolicyInvalidResultSchema,
  PolicyListItemSchema,
  PolicySchema,
  PolicyTemplateSchema,
  PolicyValidResultSchema,
  PolicyVersionParams,
  PolicyVersionSchema,
  SetDefaultPolicyBody,
  UpdatePolicyBody,
  ValidatePolicyBody,
} from "./policies.schemas";

/** /api/v1/policies: security policies, their versions, templates and the organization default. */
export function policyRoutes(deps: AppDeps, security: ReturnType<typeof securityPlugin>) {
  return (
    new Elysia({ prefix: "/api/v1/policies", tags: ["Policies"] })
      .use(security)
      .model(POLICY_MODELS)
      // Fixed paths first, so that they are never taken for a policy id.
      .get("/default", async ({ principal }) => await getDefaultPolicy(deps, principal.organizationId), {
        access: "policies:read",
        response: { 200: PolicySchema, ...errorResponses(401, 403, 429) },
        detail: {
          summary: "The organization default policy",
          description: "Followed by every device that has no policy of its own.",
        },
      })
      .put(
        "/default",
        ({ body, principal, actor }) =>
          setDefaultPolicy(deps, actor, principal.organizationId, body.policy_id),
        {
          access: "policies:write",
          body: SetDefaultPolicyBody,
          response: { 200: PolicySchema, ...errorResponses(400, 401, 403, 404, 429) },
          detail: {
            summary: "Make a policy the organization default",
            description:
              "Devices without a policy of their own follow it from now on. Emits policy.assigned with scope organization_default.",
          },
        },
      )
      .get("/templates", () => ({ data: [...POLICY_TEMPLATES] }), {
        access: "policies:read",
        response: {
          200: Type.Object({ data: Type.Array(PolicyTemplateSchema) }),
          ...errorResponses(401, 403, 429),
        },
        detail: { summary: "List the built-in policy templates" },
      })
      .post(
        "/from-template",
        async ({ body, principal, actor, set }) => {
          set.status = 201;
          return await createPolicyFromTemplate(deps, actor, principal.organizationId, {
            templateId: body.template_id,
            name: body.name,
            description: body.description,
            customizations: body.customizations,
          });
        },
        {
          access: "policies:write",
          body: CreateFromTemplateBody,
          response: { 201: PolicySchema, ...errorResponses(400, 401, 403, 404, 409, 429) },
          detail: {
            summary: "Create a policy from a template",
            description:
              "customizations are deep-merged over the template's settings (arrays are replaced); errors in them are reported as customizations.<section>.<setting>. 404 for an unknown template, 409 if the name is taken.",
          },
        },
      )
      .post(
        "/validate",
        ({ body }) => {
          const result = validateSubmittedPolicyData(body.policy_data);
          if (!result.ok) throw new PolicyDocumentInvalidError(result.errors);
          return { valid: true as const, errors: [], policy_data: result.value };
        },
        {
          access: "policies:read",
          body: ValidatePolicyBody,
          response: {
            200: PolicyValidResultSchema,
            400: PolicyInvalidResultSchema,
            ...errorResponses(401, 403, 429),
          },
          detail: {
            summary: "Check a policy document without saving it",
            description:
              "200 with valid true and the complete document (defaults filled in), or 400 with valid false and every problem: field (dotted path), message and received value.",
          },
        },
      )
      .get(
        "",
        async ({ query, principal }) => {
          const page = pageOf(query);
          return paginate(await listPolicies(deps, principal.organizationId, page), page);
        },
        {
          access: "policies:read",
          query: Type.Object(PageQuery),
          response: { 200: Paginated(PolicyListItemSchema), ...errorResponses(400, 401, 403, 429) },
          detail: { summary: "List policies, newest first" },
        },
      )
      .post(
        "",
        async ({ body, principal, actor, set }) => {
          set.status = 201;
          return await createPolicy(deps, actor, principal.organizationId, {
            name: body.name,
            description: body.description,
            policyData: body.policy_data,
          });
        },
        {
          access: "policies:write",
          body: CreatePolicyBody,
          response: { 201: PolicySchema, ...errorResponses(400, 401, 403, 409, 429) },
          detail: {
            summary: "Create a policy",
            description:
              "The policy starts at version 1, active, with no devices. Omitted settings take the defaults (the balanced template). 409 if the name is taken.",
          },
        },
      )
      .get(
        "/:id",
        async ({ params, principal }) => await getPolicy(deps, principal.organizationId, params.id),
        {
          access: "policies:read",
          params: IdParams,
          response: { 200: PolicySchema, ...errorResponses(401, 403, 404, 429) },
          detail: { summary: "Get a policy with its current settings" },
        },
      )
      .put(
        "/:id",
        ({ params, body, principal, actor }) =>
          updatePolicy(deps, actor, principal.organizationId, params.id, {
            name: body.name,
            description: body.description,
            policyData: body.policy_data,
            expectedVersion: body.expected_version,
          }),
        {
          access: "policies:write",
          params: IdParams,
          body: UpdatePolicyBody,
          response: { 200: PolicySchema, ...errorResponses(400, 401, 403, 404, 409, 429) },
          detail: {
            summary: "Change a policy (creates a new version)",
            description:
              "policy_data is merged over the current settings. A change creates version + 1 and emits policy.updated; devices receive it at their next check-in. Changed settings mark the policy's devices for compliance re-evaluation: the first 500 before the answer, the rest by the reevaluate-stale-compliance job. A request that changes nothing returns the policy unchanged. 400 for a blank name; 409 if expected_version is not the current version, or the name is taken.",
          },
        },
      )
      .delete(
        "/:id",
        async ({ params, principal, actor }) => {
          const deletion = await deletePolicy(deps, actor, principal.organizationId, params.id);
          return {
            message: "policy deleted; its devices now follow the default policy",
            affected_devices: deletion.affectedDevices,
            fallback_policy: deletion.fallbackPolicyId,
          };
        },
        {
          access: "policies:write",
          params: IdParams,
          response: { 200: PolicyDeletedSchema, ...errorResponses(401, 403, 404, 409, 429) },
          detail: {
            summary: "Delete a policy",
            description:
              "Its devices fall back to the organization default policy. 409 for the default policy itself.",
          },
        },
      )
      .get(
        "/:id/devices",
        async ({ params, query, principal }) => {
          const page = pageOf(query);
          return paginate(await listPolicyDevices(deps, principal.organizationId, params.id, page), page);
        },
        {
          access: "policies:read",
          params: IdParams,
          query: Type.Object(PageQuery),
          response: { 200: Paginated(PolicyDeviceSchema), ...errorResponses(400, 401, 403, 404, 429) },
          detail: {
            summary: "List the devices that follow a policy",
            description:
              "For the default policy this includes devices without a policy of their own. Wiped devices are left out.",
          },
        },
      )
      .get(
        "/:id/history",
        async ({ params, query, principal }) => {
          const page = pageOf(query);
          return paginate(await listPolicyHistory(deps, principal.organizationId, params.id, page), page);
        },
        {
          access: "policies:read",
          params: IdParams,
          query: Type.Object(PageQuery),
          response: { 200: Paginated(PolicyHistoryEntrySchema), ...errorResponses(400, 401, 403, 404, 429) },
          detail: { summary: "A policy's versions, newest first" },
        },
      )
      .get(
        "/:id/versions/:version",
        async ({ params, principal }) =>
          await getPolicyVersion(deps, principal.organizationId, params.id, Number(params.version)),
        {
          access: "policies:read",
          params: PolicyVersionParams,
          response: { 200: PolicyVersionSchema, ...errorResponses(400, 401, 403, 404, 429) },
          detail: { summary: "One version of a policy, with its full settings" },
        },
      )
  );
}
