import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { MFA_CHALLENGE_KINDS, MFA_METHOD_TYPES, PLANS, ROLES, SIGN_IN_METHODS } from "./enums";

/** Tenants. `device_count` is kept by the device domain so unfiltered device lists need no count scan. */
export const organizations = sqliteTable(
  "organizations",
  {
    id: text("id").primaryKey(),
    name: text("name").notNull(),
    plan: text("plan", { enum: PLANS }).notNull().default("standard"),
    defaultPolicyId: text("default_policy_id"),
    ssoSettings: text("sso_settings", { mode: "json" })
      .$type<Record<string, unknown>>()
      .notNull()
      .default(sql`'{}'`),
    deviceCount: integer("device_count").notNull().default(0),
    /**
     * Bumped by triggers (migration 0010) whenever a device leaves the organization's list or changes its
     * place in it (deleted, enrolled_at or organization changed); enrolling only adds at the head. Deep
     * device-list pages keep anchors that stay valid while it is unchanged.
     */
    deviceListVersion: integer("device_list_version").notNull().default(0),
    /** Users without a second factor get sessions good only for setting one up. */
    requireMfa: integer("require_mfa", { mode: "boolean" }).notNull().default(false),
    /**
     * The organization's own block of `vpn.address_pool` (CIDR text, e.g. 10.100.16.0/20): its devices'
     * addresses and their default allowed_ips. Given at creation, or at start for organizations made before
     * subnets existed or whose block no longer fits the configuration (domain/organizations/assign-vpn-subnets.ts).
     */
    vpnSubnet: text("vpn_subnet"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
  },
  (table) => [uniqueIndex("organizations_vpn_subnet_unique").on(table.vpnSubnet)],
);

export const users = sqliteTable(
  "users",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id),
    email: text("email").notNull(),
    name: text("name").notNull(),
    role: text("role", { enum: ROLES }).notNull(),
    passwordHash: text("password_hash").notNull(),
    isDisabled: integer("is_disabled", { mode: "boolean" }).notNull().default(false),
    isRestricted: integer("is_restricted", { mode: "boolean" }).notNull().default(false),
    /** At least one confirmed TOTP or WebAuthn factor (kept by the MFA domain; read on every request). */
    mfaEnabled: integer("mfa_enabled", { mode: "boolean" }).notNull().default(false),
    /** Tokens issued before this instant are refused (password change, disable, delete). */
    tokensValidAfter: text("tokens_valid_after"),
    lastLoginAt: text("last_login_at"),
    /**
     * The user objected to the processing of their devices' activity (GDPR): from then on those devices'
     * log entries keep the event and time only.
     */
    deviceActivityObjectedAt: text("device_activity_objected_at"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    deletedAt: text("deleted_at"),
    /** Erased at the user's request (GDPR): the row is an anonymous stub kept for the audit trail's ids. */
    erasedAt: text("erased_at"),
  },
  (table) => [
    uniqueIndex("users_email_unique").on(table.email),
    index("users_organization_idx").on(table.organizationId, table.createdAt),
  ],
);

/** The server's JWT signing keys; the newest active one signs, all unexpired ones verify. */
export const signingKeys = sqliteTable("signing_keys", {
  id: text("id").primaryKey(),
  algorithm: text("algorithm").notNull(),
  privateJwk: text("private_jwk").notNull(),
  publicJwk: text("public_jwk").notNull(),
  createdAt: text("created_at").notNull(),
});

/** One row per issued refresh token (by jti); single use, rotated on refresh. */
export const refreshTokens = sqliteTable(
  "refresh_tokens",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    sessionId: text("session_id")
      .notNull()
      .references(() => sessions.id, { onDelete: "cascade" }),
    issuedAt: text("issued_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    usedAt: text("used_at"),
    revokedAt: text("revoked_at"),
  },
  (table) => [
    index("refresh_tokens_session_idx").on(table.sessionId),
    index("refresh_tokens_user_idx").on(table.userId),
    index("refresh_tokens_expires_idx").on(table.expiresAt),
  ],
);

/**
 * A sign-in session: the family of one login's refresh tokens. Access tokens carry its id (`sid`), so
 * revoking the session (logout, refresh-token reuse, password change) stops them at once too.
 */
export const sessions = sqliteTable(
  "sessions",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    ip: text("ip"),
    /** How the user proved who they are: password alone, password and a second factor, or SSO. */
    signInMethod: text("sign_in_method", { enum: SIGN_IN_METHODS }).notNull().default("password"),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    revokedAt: text("revoked_at"),
    revokedReason: text("revoked_reason"),
  },
  (table) => [index("sessions_user_idx").on(table.userId), index("sessions_expires_idx").on(table.expiresAt)],
);

export const apiKeys = sqliteTable(
  "api_keys",
  {
    id: text("id").primaryKey(),
    organizationId: text("organization_id")
      .notNull()
      .references(() => organizations.id),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    name: text("name").notNull(),
    keyHash: text("key_hash").notNull(),
    keyPrefix: text("key_prefix").notNull(),
    scopes: text("scopes", { mode: "json" }).$type<string[]>().notNull(),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    revokedAt: text("revoked_at"),
    lastUsedAt: text("last_used_at"),
  },
  (table) => [
    uniqueIndex("api_keys_hash_unique").on(table.keyHash),
    index("api_keys_organization_idx").on(table.organizationId, table.createdAt),
  ],
);

/** Failed sign-ins per (email, ip) inside the lockout window; persisted so a restart does not reset it. */
export const loginFailures = sqliteTable(
  "login_failures",
  {
    email: text("email").notNull(),
    ip: text("ip").notNull(),
    failures: integer("failures").notNull(),
    windowStartedAt: text("window_started_at").notNull(),
    lockedUntil: text("locked_until"),
  },
  (table) => [primaryKey({ columns: [table.email, table.ip] })],
);

/**
 * A user's second factors. TOTP: `secret` sealed with the key file beside the database, `last_time_step`
 * the newest step accepted (each step works once). WebAuthn: the credential's id, COSE public key
 * (base64url) and signature counter. An unconfirmed TOTP row is an enrolment in progress.
 */
export const mfaMethods = sqliteTable(
  "mfa_methods",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    type: text("type", { enum: MFA_METHOD_TYPES }).notNull(),
    name: text("name").notNull(),
    secret: text("secret"),
    lastTimeStep: integer("last_time_step"),
    credentialId: text("credential_id"),
    publicKey: text("public_key"),
    signCount: integer("sign_count").notNull().default(0),
    transports: text("transports", { mode: "json" }).$type<string[]>(),
    confirmedAt: text("confirmed_at"),
    createdAt: text("created_at").notNull(),
    lastUsedAt: text("last_used_at"),
  },
  (table) => [
    index("mfa_methods_user_idx").on(table.userId),
    uniqueIndex("mfa_methods_credential_unique").on(table.credentialId),
  ],
);

/** Single-use recovery codes, stored as keyed digests (the key lives in the key file, not here). */
export const recoveryCodes = sqliteTable(
  "recovery_codes",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    codeDigest: text("code_digest").notNull(),
    createdAt: text("created_at").notNull(),
    usedAt: text("used_at"),
  },
  (table) => [index("recovery_codes_user_idx").on(table.userId)],
);

/**
 * Short-lived MFA state. `sign_in`: the mfa_token of a half-finished sign-in (stored as a digest), the
 * WebAuthn challenge of its authentication options and the wrong codes so far. `webauthn_registration`:
 * the challenge of a user's newest registration options.
 */
export const mfaChallenges = sqliteTable(
  "mfa_challenges",
  {
    id: text("id").primaryKey(),
    userId: text("user_id")
      .notNull()
      .references(() => users.id, { onDelete: "cascade" }),
    kind: text("kind", { enum: MFA_CHALLENGE_KINDS }).notNull(),
    tokenDigest: text("token_digest"),
    webauthnChallenge: text("webauthn_challenge"),
    failures: integer("failures").notNull().default(0),
    createdAt: text("created_at").notNull(),
    expiresAt: text("expires_at").notNull(),
    usedAt: text("used_at"),
  },
  (table) => [
    uniqueIndex("mfa_challenges_token_unique").on(table.tokenDigest),
    index("mfa_challenges_user_idx").on(table.userId, table.kind),
    index("mfa_challenges_expires_idx").on(table.expiresAt),
  ],
);
