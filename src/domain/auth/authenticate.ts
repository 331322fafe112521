import { eq } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { lookUpApiKey, lookUpKeyHolder, lookUpSession } from "../../db/lookups";
import { apiKeys } from "../../db/tables";
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

/**
 * Resolves a bearer credential (access token or API key) to a principal, checking on every request that
 * the session is live and the user still enabled, so revocations take effect at once. The user's current
 * role decides the scopes, not the role at sign-in.
 */
export async function authenticateCredential(deps: AuthDeps, credential: string): Promise<Principal> {
  if (credential.startsWith(API_KEY_PREFIX)) return await authenticateApiKey(deps, credential);
  const claims = await verifyOwnToken<AccessClaims>(deps, credential, "access");
  const row = await lookUpSession(deps.db, claims.sid, claims.sub);
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
  const stored = await lookUpApiKey(deps.db, hashSecret(key));
  const holder = stored && (await lookUpKeyHolder(deps.db, stored.userId));
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
