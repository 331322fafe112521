import type { Tx } from "../../db/client";
import { refreshTokens, sessions } from "../../db/tables";
import { toIso } from "../../lib/clock";
import { type AuthDeps, tokenSettings } from "./auth-deps";
import { ROLE_SCOPES, type Role } from "./scopes";
import { signAccessToken, signRefreshToken } from "./tokens";

export interface TokenPair {
  token: string;
  refresh_token: string;
  expires_in: number;
  token_type: "Bearer";
}

export interface SignedTokens {
  pair: TokenPair;
  refreshJti: string;
  refreshExpiresAt: Date;
}

/** Signs an access and a refresh token for a user in session `sessionId` (no database writes). */
export async function signTokenPair(
  deps: AuthDeps,
  user: { id: string; organizationId: string; role: Role },
  sessionId: string,
): Promise<SignedTokens> {
  const now = deps.clock.now();
  const settings = tokenSettings(deps);
  const access = await signAccessToken(deps.keys, settings, now, {
    userId: user.id,
    organizationId: user.organizationId,
    role: user.role,
    scopes: [...ROLE_SCOPES[user.role]],
    sessionId,
  });
  const refresh = await signRefreshToken(deps.keys, settings, now, {
    userId: user.id,
    organizationId: user.organizationId,
    sessionId,
  });
  return {
    pair: {
      token: access.token,
      refresh_token: refresh.token,
      expires_in: settings.accessTtlSeconds,
      token_type: "Bearer",
    },
    refreshJti: refresh.jti,
    refreshExpiresAt: refresh.expiresAt,
  };
}

/** Stores a new session row and its first refresh token. */
export async function insertSession(
  tx: Tx,
  now: Date,
  input: {
    sessionId: string;
    userId: string;
    ip: string | null;
    signInMethod: "password" | "mfa" | "sso";
    signed: SignedTokens;
  },
): Promise<void> {
  await tx.insert(sessions).values({
    id: input.sessionId,
    userId: input.userId,
    ip: input.ip,
    signInMethod: input.signInMethod,
    createdAt: toIso(now),
    expiresAt: toIso(input.signed.refreshExpiresAt),
  });
  await insertRefreshToken(tx, now, input.sessionId, input.userId, input.signed);
}

export async function insertRefreshToken(
  tx: Tx,
  now: Date,
  sessionId: string,
  userId: string,
  signed: SignedTokens,
): Promise<void> {
  await tx.insert(refreshTokens).values({
    id: signed.refreshJti,
    userId,
    sessionId,
    issuedAt: toIso(now),
    expiresAt: toIso(signed.refreshExpiresAt),
  });
}
