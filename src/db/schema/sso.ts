import { index, primaryKey, sqliteTable, text } from "drizzle-orm/sqlite-core";
import { SSO_PROVIDERS } from "./enums";
import { organizations, users } from "./identity";

/** Which identity-provider account is which user: matched by (organization, provider, issuer, subject). */
export const ssoIdentities = sqliteTable(
  "sso_identities",
  {
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id),
    provider: text("provider", { enum: SSO_PROVIDERS }).notNull(),
    /**
     * Who vouches for the subject: the OIDC issuer or the SAML IdP's entity ID. A subject is unique only
     * at its issuer, so pointing the connection at another provider links nobody by an old subject.
     */
    issuer: text("issuer").notNull(),
    /** The OIDC `sub` or the SAML NameID. */
    subject: text("subject").notNull(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    createdAt: text("created_at").notNull(),
    lastSignInAt: text("last_sign_in_at").notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.organizationId, table.provider, table.issuer, table.subject] }),
    index("sso_identities_user_idx").on(table.userId),
  ],
);

/**
 * A sign-in sent to an identity provider and not yet back: kept in the database so it is single-use and
 * survives a restart. OIDC rows are keyed by the SHA-256 of the client's state; SAML rows by the
 * AuthnRequest ID the response must name in InResponseTo.
 */
export const ssoRequests = sqliteTable(
  "sso_requests",
  {
    id: text("id").primaryKey(),
    provider: text("provider", { enum: SSO_PROVIDERS }).notNull(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id),
    redirectUri: text("redirect_uri").notNull(),
    /** SAML: the client's state, given back on the redirect (OIDC's comes back from the provider). */
    clientState: text("client_state"),
    /** OIDC: the nonce the ID token must carry. */
    nonce: text("nonce"),
    /** OIDC: the PKCE code verifier, sealed. */
    codeVerifier: text("code_verifier"),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    usedAt: text("used_at"),
  },
  (table) => [index("sso_requests_expires_idx").on(table.expiresAt)],
);

/** SAML assertion ids already accepted, remembered until the assertion expires (replay refused). */
export const samlAssertions = sqliteTable(
  "saml_assertions",
  {
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id),
    assertionId: text("assertion_id").notNull(),
    expiresAt: text("expires_at").notNull(),
  },
  (table) => [
    primaryKey({ columns: [table.organizationId, table.assertionId] }),
    index("saml_assertions_expires_idx").on(table.expiresAt),
  ],
);

/** One-time codes a SAML sign-in hands to the client's redirect_uri, exchanged for tokens (digest only). */
export const ssoCodes = sqliteTable(
  "sso_codes",
  {
    codeDigest: text("code_digest").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    provider: text("provider", { enum: SSO_PROVIDERS }).notNull(),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    usedAt: text("used_at"),
  },
  (table) => [index("sso_codes_expires_idx").on(table.expiresAt)],
);

/**
 * Which organization an email domain's people sign in with: one organization per domain across the
 * installation (a domain in an organization's allowed_domains claims it). With several organizations,
 * single sign-on discovery by email domain uses a claim only once the operator confirmed it (`bulwark
 * org sso-domain add`): a tenant cannot send another's people to its own identity provider.
 */
export const ssoDomains = sqliteTable(
  "sso_domains",
  {
    /** Lower case, as allowed_domains store it. */
    domain: text("domain").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id, { onDelete: "cascade" }),
    /** Set by the operator's confirmation, or when the installation had this one organization. */
    confirmedAt: text("confirmed_at"),
    /** "operator", or "single organization" (confirmed when a second organization was created). */
    confirmedBy: text("confirmed_by"),
    createdAt: text("created_at").notNull(),
  },
  (table) => [index("sso_domains_organization_idx").on(table.organizationId)],
);
