import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { getOrganization } from "../../domain/organizations/get-organization";
import { updateOrganization } from "../../domain/organizations/update-organization";
import type { AppDeps } from "../app-deps";
import type { securityPlugin } from "../plugins/security";
import { errorResponses, Timestamp, Uuid } from "../schemas/common";

const Plan = Type.Union([Type.Literal("standard"), Type.Literal("enterprise")], {
  description: "enterprise raises the rate limit to 10,000 requests per minute and enables SAML",
});

const OidcSettings = Type.Object(
  {
    enabled: Type.Boolean(),
    issuer: Type.Optional(Type.String({ format: "uri", maxLength: 2000 })),
    client_id: Type.Optional(Type.String({ maxLength: 500 })),
    client_secret: Type.Optional(Type.String({ maxLength: 2000, description: "Write-only; never returned" })),
  },
  { additionalProperties: false },
);

const SamlSettings = Type.Object(
  {
    enabled: Type.Boolean(),
    idp_entity_id: Type.Optional(Type.String({ maxLength: 2000 })),
    idp_sso_url: Type.Optional(Type.String({ format: "uri", maxLength: 2000 })),
    idp_certificate: Type.Optional(
      Type.String({ maxLength: 20000, description: "PEM certificate of the identity provider" }),
    ),
  },
  { additionalProperties: false },
);

const SsoSettingsInput = Type.Object(
  { oidc: Type.Optional(OidcSettings), saml: Type.Optional(SamlSettings) },
  { additionalProperties: false },
);

const OrganizationSchema = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    plan: Plan,
    default_policy_id: Type.Union([Uuid, Type.Null()]),
    device_count: Type.Integer(),
    user_count: Type.Integer(),
    sso: Type.Object({
      oidc: Type.Optional(
        Type.Object({
          enabled: Type.Boolean(),
          issuer: Type.Optional(Type.String()),
          client_id: Type.Optional(Type.String()),
          has_client_secret: Type.Optional(Type.Boolean()),
        }),
      ),
      saml: Type.Optional(SamlSettings),
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: "Organization" },
);

const UpdateOrganizationBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    plan: Type.Optional(Plan),
    sso: Type.Optional(SsoSettingsInput),
  },
  { additionalProperties: false, minProperties: 1 },
);

/** /api/v1/organizations/current: the caller's organization. */
export function organizationRoutes(deps: AppDeps, security: ReturnType<typeof securityPlugin>) {
  return new Elysia({ prefix: "/api/v1/organizations", tags: ["Organizations"] })
    .use(security)
    .get("/current", ({ principal }) => getOrganization(deps, principal.organizationId), {
      access: "authenticated",
      response: { 200: OrganizationSchema, ...errorResponses(401, 429) },
      detail: { summary: "The caller's organization" },
    })
    .patch(
      "/current",
      ({ body, principal, actor }) => updateOrganization(deps, actor, principal.organizationId, body),
      {
        access: "admin",
        body: UpdateOrganizationBody,
        response: { 200: OrganizationSchema, ...errorResponses(400, 401, 403, 429) },
        detail: {
          summary: "Rename the organization, change its plan or SSO settings",
          description: "SAML needs plan enterprise (400 otherwise).",
        },
      },
    );
}
