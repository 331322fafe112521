import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { getOrganization } from "../../domain/organizations/get-organization";
import { OrganizationSchema, PlanSchema } from "../../domain/organizations/organization-view";
import { updateOrganization } from "../../domain/organizations/update-organization";
import { SsoSettingsInputSchema } from "../../domain/sso/sso-settings-view";
import type { AppDeps } from "../app-deps";
import type { securityPlugin } from "../plugins/security";
import { errorResponses } from "../schemas/common";

const UpdateOrganizationBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    plan: Type.Optional(PlanSchema),
    sso: Type.Optional(SsoSettingsInputSchema),
    require_mfa: Type.Optional(
      Type.Boolean({
        description:
          "true: users without a second factor can only set one up (GET /users/me, /auth/mfa/*) until they have",
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

/** /api/v1/organizations/current: the caller's organization. */
export function organizationRoutes(deps: AppDeps, security: ReturnType<typeof securityPlugin>) {
  return new Elysia({ prefix: "/api/v1/organizations", tags: ["Organizations"] })
    .use(security)
    .get("/current", async ({ principal }) => await getOrganization(deps, principal.organizationId), {
      access: "authenticated",
      response: { 200: OrganizationSchema, ...errorResponses(401, 429) },
      detail: { summary: "The caller's organization" },
    })
    .patch("/current", ({ body, principal, actor }) => updateOrganization(deps, principal, actor, body), {
      access: "admin",
      body: UpdateOrganizationBody,
      response: { 200: OrganizationSchema, ...errorResponses(400, 401, 403, 409, 429) },
      detail: {
        summary: "Rename the organization, change its SSO settings or require MFA",
        description:
          "SAML needs plan enterprise (403 saml_requires_enterprise otherwise). Turning require_mfa on needs your own second factor first (409 mfa_not_enabled). The plan is set by the operator of the installation (`bulwark org set-plan`): sending `plan` is a 403 plan_set_by_operator.",
      },
    });
}
