import { sql } from "drizzle-orm";
import { index, integer, primaryKey, sqliteTable, text, uniqueIndex } from "drizzle-orm/sqlite-core";
import { PLANS, ROLES } from "./enums";

/** Tenants. `device_count` is kept by the device domain so unfiltered device lists need no count scan. */
export const organizations = sqliteTable("organizations", {
  id: text("id").primaryKey(),
  name: text("name").notNull(),
  plan: text("plan", { enum: PLANS }).notNull().default("standard"),
  defaultPolicyId: text("default_policy_id"),
  ssoSettings: text("sso_settings", { mode: "json" })
    .$type<Record<string, unknown>>()
    .notNull()
    .default(sql`'{}'`),
  deviceCount: integer("device_count").notNull().default(0),
  createdAt: text("created_at").notNull(),
  updatedAt: text("updated_at").notNull(),
});

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
    /** Tokens issued before this instant are refused (password change, disable, delete). */
    tokensValidAfter: text("tokens_valid_after"),
    lastLoginAt: text("last_login_at"),
    createdAt: text("created_at").notNull(),
    updatedAt: text("updated_at").notNull(),
    deletedAt: text("deleted_at"),
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
