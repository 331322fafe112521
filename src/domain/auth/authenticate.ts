import { eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { withTransaction } from "../../db/client";
import { preparedRead } from "../../db/prepared";
import { apiKeys, organizations, sessions, users } from "../../db/schema";
import { addSeconds, toIso } from "../../lib/clock";
import { hashSecret } from "../../lib/secrets";
import { UnauthenticatedError } from "../errors";
import { type AuthDeps, verifyOwnToken } from "./auth-deps";
import type { Principal } from "./principal";
import { effectiveApiKeyScopes, ROLE_SCOPES } from "./scopes";
import type { AccessClaims } from "./tokens";

export const API_KEY_PREFIX = "bwk_";

// last_used_at is written at most this often per key, so busy automation does not turn reads into writes.
const LAST_USED_RESOLUTION_SECONDS = 60;

// These lookups run on every request; building Drizzle's SQL costs more than running it, so they are
// prepared once per database. Each reads one table and takes the others' columns through scalar
// subqueries: SQLite as Bun ships it (3.54) prepares a join whose WHERE binds a parameter again at every
// execution, which made the session lookup ~19 µs where this form takes ~3 µs. The subqueries are
// written with qualified names: Drizzle renders a one-table select's columns unqualified, and an
// unqualified name inside a subquery could bind to the wrong table.
const ORGANIZATION_OF_USER = "FROM organizations WHERE organizations.id = users.organization_id";
const organizationPlan = sql.raw(`(SELECT organizations.plan ${ORGANIZATION_OF_USER})`);
const sessionLookup = preparedRead((db: Db) => {
  const sessionColumn = (column: string) =>
    sql`(SELECT ${sql.raw(`sessions.${column}`)} FROM sessions WHERE sessions.id = ${sql.placeholder("sessionId")})`;
  return db
    .select({
      user: users,
      plan: organizationPlan.mapWith(organizations.plan),
      requireMfa: sql
        .raw(`(SELECT organizations.require_mfa ${ORGANIZATION_OF_USER})`)
        .mapWith(organizations.requireMfa),
      sessionRevokedAt: sessionColumn("revoked_at").mapWith(sessions.revokedAt),
      signInMethod: sessionColumn("sign_in_method").mapWith(sessions.signInMethod),
      sessionUserId: sessionColumn("user_id").mapWith(sessions.userId),
    })
    .from(users)
    .where(eq(users.id, sql.placeholder("userId")));
});
const apiKeyLookup = preparedRead((db: Db) =>
  db
    .select()
    .from(apiKeys)
    .where(eq(apiKeys.keyHash, sql.placeholder("keyHash"))),
);
const keyHolderLookup = preparedRead((db: Db) =>
  db
    .select({ user: users, plan: organizationPlan.mapWith(organizations.plan) })
    .from(users)
    .where(eq(users.id, sql.placeholder("userId"))),
);

/**
 * Resolves a bearer credential (access token or API key) to a principal, checking on every request that
 * the session is live and the user still enabled, so revocations take effect at once. The user's current
 * role decides the scopes, not the role at sign-in.
 */
export async function authenticateCredential(deps: AuthDeps, credential: string): Promise<Principal> {
  if (credential.startsWith(API_KEY_PREFIX)) return await authenticateApiKey(deps, credential);
  const claims = await verifyOwnToken<AccessClaims>(deps, credential, "access");
  const row = sessionLookup(deps.db).get({ sessionId: claims.sid, userId: claims.sub });
  if (!row) throw new UnauthenticatedError("session_ended", "invalid token", "the session has ended");
  // The account's state first: a disabled or restricted user's sessions are ended too, and "account
  // restricted" tells them more than "the session has ended".
  assertUserActive(row.user);
  if (row.sessionUserId !== claims.sub || row.sessionRevokedAt)
    throw new UnauthenticatedError("session_ended", "invalid token", "the session has ended");
  return {
    kind: "user",
    userId: row.user.id,
    email: row.user.email,
    organizationId: row.user.organizationId,
    plan: row.plan,
    role: row.user.role,
    scopes: [...ROLE_SCOPES[row.user.role]],
    sessionId: claims.sid,
    apiKeyId: null,
    apiKeyName: null,
    accessTokenJti: claims.jti,
    mfaSetupPending: row.requireMfa && !row.user.mfaEnabled && row.signInMethod !== "sso",
  };
}

async function authenticateApiKey(deps: AuthDeps, key: string): Promise<Principal> {
  const now = deps.clock.now();
  const stored = apiKeyLookup(deps.db).get({ keyHash: hashSecret(key) });
  const holder = stored && keyHolderLookup(deps.db).get({ userId: stored.userId });
  if (!stored || !holder) throw new UnauthenticatedError("api_key_invalid", "invalid API key");
  const row = { key: stored, user: holder.user, plan: holder.plan };
  if (row.key.revokedAt)
    throw new UnauthenticatedError("api_key_revoked", "invalid API key", "the API key has been revoked");
  if (row.key.expiresAt <= toIso(now))
    throw new UnauthenticatedError("api_key_expired", "invalid API key", "the API key has expired");
  assertUserActive(row.user);
  if (!row.key.lastUsedAt || addSeconds(new Date(row.key.lastUsedAt), LAST_USED_RESOLUTION_SECONDS) <= now) {
    await withTransaction(
      deps.db,
      async (tx) =>
        await tx
          .update(apiKeys)
          .set({ lastUsedAt: toIso(now) })
          .where(eq(apiKeys.id, row.key.id)),
    );
  }
  return {
    kind: "api_key",
    userId: row.user.id,
    email: row.user.email,
    organizationId: row.key.organizationId,
    plan: row.plan,
    role: row.user.role,
    scopes: effectiveApiKeyScopes(row.key.scopes, row.user.role),
    sessionId: null,
    apiKeyId: row.key.id,
    apiKeyName: row.key.name,
    accessTokenJti: null,
    mfaSetupPending: false,
  };
}

function assertUserActive(user: {
  isDisabled: boolean;
  isRestricted: boolean;
  deletedAt: string | null;
}): void {
  if (user.deletedAt)
    throw new UnauthenticatedError("account_deleted", "invalid token", "the account no longer exists");
  if (user.isDisabled) throw new UnauthenticatedError("account_disabled", "account disabled");
  if (user.isRestricted) throw new UnauthenticatedError("account_restricted", "account restricted");
}
