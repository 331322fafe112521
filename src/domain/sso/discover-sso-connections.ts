import { type Static, Type } from "@sinclair/typebox";
import { and, asc, eq, or, sql } from "drizzle-orm";
import { organizations } from "../../db/schema";
import { Uuid } from "../../lib/schema-types";
import type { DomainDeps } from "../deps";
import { parseEmail } from "../users/email";
import { readStoredSso } from "./sso-settings-view";

const OrganizationFields = {
  organization_id: Uuid,
  organization_name: Type.String(),
};

/** A connection a person with this email may sign in through. */
export const SsoDiscoveredConnectionSchema = Type.Union(
  [
    Type.Object(
      {
        type: Type.Literal("oidc"),
        ...OrganizationFields,
        client_id: Type.String({ description: "For GET /auth/sso/oidc/authorize?client_id=..." }),
      },
      { title: "SsoDiscoveredOidcConnection" },
    ),
    Type.Object(
      { type: Type.Literal("saml"), ...OrganizationFields },
      {
        title: "SsoDiscoveredSamlConnection",
        description: "Start with GET /auth/sso/saml/login?organization_id=...",
      },
    ),
  ],
  { description: "type says how to start the sign-in" },
);

export const SsoDiscoverySchema = Type.Object(
  {
    connections: Type.Array(SsoDiscoveredConnectionSchema, {
      description: "Empty when no enabled connection lists the email's domain",
    }),
  },
  { title: "SsoDiscovery" },
);

export type SsoDiscovery = Static<typeof SsoDiscoverySchema>;

/**
 * The enabled single sign-on connections whose allowed_domains list the email's domain: OIDC, and SAML
 * of organizations on the enterprise plan (the only ones whose SAML sign-in starts). Says nothing about
 * whether anyone with that email has an account; an email without connections gets an empty list.
 */
export function discoverSsoConnections(deps: DomainDeps, email: string): SsoDiscovery {
  const address = parseEmail(email);
  const domain = address.slice(address.lastIndexOf("@") + 1);
  // allowed_domains are stored lower-cased (prepare-sso-settings.ts), as the address now is.
  const listsDomain = (connection: "oidc" | "saml") =>
    sql`exists (select 1 from json_each(${organizations.ssoSettings}, ${`$.${connection}.allowed_domains`}) where value = ${domain})`;
  const isEnabled = (connection: "oidc" | "saml") =>
    sql`json_extract(${organizations.ssoSettings}, ${`$.${connection}.enabled`}) = 1`;
  const rows = deps.db
    .select({
      id: organizations.id,
      name: organizations.name,
      plan: organizations.plan,
      ssoSettings: organizations.ssoSettings,
    })
    .from(organizations)
    .where(
      or(
        and(isEnabled("oidc"), listsDomain("oidc")),
        and(eq(organizations.plan, "enterprise"), isEnabled("saml"), listsDomain("saml")),
      ),
    )
    .orderBy(asc(organizations.name), asc(organizations.id))
    .all();
  const connections: SsoDiscovery["connections"] = [];
  for (const row of rows) {
    const { oidc, saml } = readStoredSso(row.ssoSettings);
    const organization = { organization_id: row.id, organization_name: row.name };
    if (oidc?.enabled && oidc.client_id && oidc.allowed_domains.includes(domain))
      connections.push({ type: "oidc", ...organization, client_id: oidc.client_id });
    // What startSamlSignIn asks of a connection before it redirects anyone.
    const isSamlUsable =
      row.plan === "enterprise" &&
      saml?.enabled &&
      saml.idp_entity_id &&
      saml.idp_sso_url &&
      saml.idp_certificate &&
      saml.allowed_domains.includes(domain);
    if (isSamlUsable) connections.push({ type: "saml", ...organization });
  }
  return { connections };
}
