import { type Static, Type } from "@sinclair/typebox";
import { eq } from "drizzle-orm";
import { firstRow } from "../../db/first-row";
import { organizations } from "../../db/tables";
import { Uuid } from "../../lib/schema-types";
import type { DomainDeps } from "../deps";
import { parseEmail } from "../users/email";
import { discoverableDomainOwner } from "./sso-domains";
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
      description:
        "Empty when no enabled connection of the organization that claims the email's domain lists it (with several organizations, a claim counts once the operator confirmed it)",
    }),
  },
  { title: "SsoDiscovery" },
);

export type SsoDiscovery = Static<typeof SsoDiscoverySchema>;

/**
 * The enabled single sign-on connections of the one organization that claims the email's domain
 * (sso-domains.ts: on an installation of several organizations, only once the operator confirmed the
 * claim) and whose allowed_domains list it: OIDC, and SAML on the enterprise plan (the only SAML
 * sign-in that starts). Says nothing about whether anyone with that email has an account; an email
 * without connections gets an empty list.
 */
export async function discoverSsoConnections(deps: DomainDeps, email: string): Promise<SsoDiscovery> {
  const address = parseEmail(email);
  // allowed_domains and claims are stored lower-cased (prepare-sso-settings.ts), as the address now is.
  const domain = address.slice(address.lastIndexOf("@") + 1);
  const owner = await discoverableDomainOwner(deps.db, domain);
  const connections: SsoDiscovery["connections"] = [];
  if (owner === null) return { connections };
  const row = await firstRow(
    deps.db
      .select({
        id: organizations.id,
        name: organizations.name,
        plan: organizations.plan,
        ssoSettings: organizations.ssoSettings,
      })
      .from(organizations)
      .where(eq(organizations.id, owner)),
  );
  if (row) {
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
