import type { DomainDeps } from "../deps";
import type { TokenKeys } from "./token-keys";
import type { TokenSettings } from "./tokens";

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
