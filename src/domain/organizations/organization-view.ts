import { type Static, Type } from "@sinclair/typebox";
import { PLANS } from "../../db/schema/enums";
import { literalUnion } from "../../lib/literal-union";
import { Timestamp, Uuid } from "../../lib/schema-types";
export const PlanSchema = literalUnion(PLANS, {
  description: "enterprise raises the rate limit to 10,000 requests per minute and enables SAML",
});

const OidcSettingsSchema = Type.Object(
  {
    enabled: Type.Boolean(),
    issuer: Type.Optional(Type.String({ format: "uri", maxLength: 2000 })),
    client_id: Type.Optional(Type.String({ maxLength: 500 })),
    client_secret: Type.Optional(Type.String({ maxLength: 2000, description: "Write-only; never returned" })),
  },
  { additionalProperties: false },
);

const SamlSettingsSchema = Type.Object(
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

/** SSO settings as an administrator sends them (the client secret write-only). */
export const SsoSettingsInputSchema = Type.Object(
  { oidc: Type.Optional(OidcSettingsSchema), saml: Type.Optional(SamlSettingsSchema) },
  { additionalProperties: false },
);

/** An organization as every response shows it: secrets of its SSO settings replaced by has_client_secret. */
export const OrganizationSchema = Type.Object(
  {
    id: Uuid,
    name: Type.String(),
    plan: PlanSchema,
    default_policy_id: Type.Union([Uuid, Type.Null()]),
    device_count: Type.Integer(),
    user_count: Type.Integer(),
    require_mfa: Type.Boolean({
      description:
        "Users without a second factor sign in to a session good only for setting one up (SSO sign-ins excepted)",
    }),
    sso: Type.Object({
      oidc: Type.Optional(
        Type.Object({
          enabled: Type.Boolean(),
          issuer: Type.Optional(Type.String()),
          client_id: Type.Optional(Type.String()),
          has_client_secret: Type.Optional(Type.Boolean()),
        }),
      ),
      saml: Type.Optional(SamlSettingsSchema),
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: "Organization" },
);

export type Plan = Static<typeof PlanSchema>;
export type SsoSettings = Static<typeof SsoSettingsInputSchema>;
export type OrganizationView = Static<typeof OrganizationSchema>;

/** Secrets in SSO settings are never returned; a boolean says whether one is set. */
export function redactSso(settings: Record<string, unknown>): OrganizationView["sso"] {
  const sso = structuredClone(settings) as SsoSettings & {
    oidc?: { client_secret?: string; has_client_secret?: boolean };
  };
  if (sso.oidc) {
    sso.oidc.has_client_secret = Boolean(sso.oidc.client_secret);
    delete sso.oidc.client_secret;
  }
  return sso;
}
