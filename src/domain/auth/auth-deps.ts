import type { DomainDeps } from "../deps";
import type { TokenKeys } from "./token-keys";
import { type AccessClaims, type RefreshClaims, type TokenSettings, verifyToken } from "./tokens";

/** Domain dependencies plus the server's JWT keys. */
export interface AuthDeps extends DomainDeps {
  keys: TokenKeys;
}

export function tokenSettings(deps: DomainDeps): TokenSettings {
  return {
    issuer: deps.config.server.base_url,
    accessTtlSeconds: deps.config.auth.access_token_ttl_seconds,
    refreshTtlSeconds: deps.config.auth.refresh_token_ttl_seconds,
  };
}

/** Verifies one of this server's own tokens of `type` now, with its keys and issuer. */
export function verifyOwnToken<T extends AccessClaims | RefreshClaims>(
  deps: AuthDeps,
  token: string,
  type: T["typ"],
): Promise<T> {
  return verifyToken<T>(deps.keys, tokenSettings(deps), deps.clock.now(), token, type);
}
