import { errors as joseErrors, jwtVerify, SignJWT } from "jose";
import { newId } from "../../lib/ids";
import { UnauthenticatedError } from "../errors";
import type { Role, Scope } from "./scopes";
import type { TokenKeys } from "./token-keys";

export interface AccessClaims {
  sub: string;
  org: string;
  role: Role;
  scopes: Scope[];
  sid: string;
  jti: string;
  iat: number;
  exp: number;
  iss: string;
  typ: "access";
}

export interface RefreshClaims {
  sub: string;
  org: string;
  sid: string;
  jti: string;
  iat: number;
  exp: number;
  iss: string;
  typ: "refresh";
}

export interface TokenSettings {
  issuer: string;
  accessTtlSeconds: number;
  refreshTtlSeconds: number;
}

export interface IssuedToken {
  token: string;
  jti: string;
  expiresAt: Date;
}

/** Signs an access token (sub, org, role, scopes, iat, exp and iss, plus `jti`, `sid` and `typ`). */
export async function signAccessToken(
  keys: TokenKeys,
  settings: TokenSettings,
  now: Date,
  subject: { userId: string; organizationId: string; role: Role; scopes: Scope[]; sessionId: string },
): Promise<IssuedToken> {
  const claims = {
    org: subject.organizationId,
    role: subject.role,
    scopes: subject.scopes,
    sid: subject.sessionId,
    typ: "access",
  };
  return signToken(keys, settings, now, subject.userId, claims, settings.accessTtlSeconds);
}

/** Signs a refresh token; its `jti` is the row id in refresh_tokens. */
export async function signRefreshToken(
  keys: TokenKeys,
  settings: TokenSettings,
  now: Date,
  subject: { userId: string; organizationId: string; sessionId: string },
): Promise<IssuedToken> {
  const claims = { org: subject.organizationId, sid: subject.sessionId, typ: "refresh" };
  return signToken(keys, settings, now, subject.userId, claims, settings.refreshTtlSeconds);
}

async function signToken(
  keys: TokenKeys,
  settings: TokenSettings,
  now: Date,
  subject: string,
  claims: Record<string, unknown>,
  ttlSeconds: number,
): Promise<IssuedToken> {
  const jti = newId();
  const iat = Math.floor(now.getTime() / 1000);
  const exp = iat + ttlSeconds;
  const token = await new SignJWT(claims)
    .setProtectedHeader({ alg: keys.algorithm, kid: keys.current.id, typ: "JWT" })
    .setSubject(subject)
    .setIssuer(settings.issuer)
    .setIssuedAt(iat)
    .setExpirationTime(exp)
    .setJti(jti)
    .sign(keys.current.privateKey);
  return { token, jti, expiresAt: new Date(exp * 1000) };
}

/** Verifies signature, issuer, expiry and token type; any failure is a 401. */
export async function verifyToken<T extends AccessClaims | RefreshClaims>(
  keys: TokenKeys,
  settings: TokenSettings,
  now: Date,
  token: string,
  type: T["typ"],
): Promise<T> {
  const cached = keys.verifiedClaims.get(token);
  if (cached && cached.expiresAtMs > now.getTime()) return checkClaims<T>(cached.claims, type);
  try {
    const { payload } = await jwtVerify(
      token,
      async (header) => {
        const entry = header.kid ? keys.verificationKeys.get(header.kid) : undefined;
        if (!entry) throw new UnauthenticatedError("token_invalid", "invalid token", "unknown signing key");
        return entry.key;
      },
      { issuer: settings.issuer, algorithms: [keys.algorithm], currentDate: now },
    );
    const claims = checkClaims<T>(payload, type);
    rememberVerified(keys, token, payload, (payload.exp ?? 0) * 1000);
    return claims;
  } catch (error) {
    if (error instanceof UnauthenticatedError) throw error;
    if (error instanceof joseErrors.JWTExpired)
      throw new UnauthenticatedError("token_expired", "token expired");
    throw new UnauthenticatedError("token_invalid", "invalid token");
  }
}

function checkClaims<T extends AccessClaims | RefreshClaims>(
  payload: Record<string, unknown>,
  type: T["typ"],
): T {
  if (
    payload.typ !== type ||
    typeof payload.sub !== "string" ||
    typeof payload.jti !== "string" ||
    typeof payload.sid !== "string"
  ) {
    throw new UnauthenticatedError(
      "token_invalid",
      "invalid token",
      `not ${type === "access" ? "an" : "a"} ${type} token`,
    );
  }
  return payload as unknown as T;
}

// An ES256 signature check costs ~0.8 ms, most of a request's time. A token's signature never changes,
// so it is checked once and its claims kept until the token expires; revocation does not depend on
// this cache (sessions and users are read from the database on every request).
const MAX_VERIFIED_TOKENS = 10_000;

function rememberVerified(
  keys: TokenKeys,
  token: string,
  claims: Record<string, unknown>,
  expiresAtMs: number,
): void {
  if (keys.verifiedClaims.size >= MAX_VERIFIED_TOKENS) {
    const oldest = keys.verifiedClaims.keys().next().value;
    if (oldest !== undefined) keys.verifiedClaims.delete(oldest);
  }
  keys.verifiedClaims.set(token, { claims, expiresAtMs });
}
