import { type Static, Type } from "@sinclair/typebox";
import { PLANS } from "../../db/schema/enums";
import { literalUnion } from "../../lib/literal-union";
import { Timestamp, Uuid } from "../../lib/schema-types";
import { SsoDomainSchema } from "../sso/sso-domains";
import { SsoSettingsSchema } from "../sso/sso-settings-view";
export const PlanSchema = literalUnion(PLANS, {
  description: "enterprise raises the rate limit to 10,000 requests per minute and enables SAML",
});

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
    sso: SsoSettingsSchema,
    sso_domains: Type.Array(SsoDomainSchema, {
      description:
        "The email domains this organization's single sign-on claims (its connections' allowed_domains): a domain belongs to one organization of the installation, and on an installation of several, discovery by email uses it once the operator confirmed it",
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: "Organization" },
);

export type Plan = Static<typeof PlanSchema>;
export type OrganizationView = Static<typeof OrganizationSchema>;
