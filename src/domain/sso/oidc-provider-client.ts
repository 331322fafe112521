import * as client from "openid-client";
import type { DomainDeps } from "../deps";
import { UnavailableError, ValidationError } from "../errors";

/** What discovery needs of a connection. */
export interface OidcClientSettings {
  issuer: string;
  clientId: string;
  /** Plaintext; empty for a public client (PKCE alone). */
  clientSecret: string;
}

const DISCOVERY_CACHE_MS = 10 * 60 * 1000;
const REQUEST_TIMEOUT_SECONDS = 10;

// One Configuration per connection, kept 10 minutes: it holds the discovered metadata and caches the
// provider's signing keys (JWKS), so a sign-in costs the token and userinfo requests only.
const configurations = new Map<string, { config: Promise<client.Configuration>; expiresAt: number }>();

/** A plain-http issuer is refused unless `auth.oidc_allow_insecure_issuers` (tests and labs only). */
export function checkIssuerUrl(deps: DomainDeps, issuer: string, field: string): URL {
  const url = URL.canParse(issuer) ? new URL(issuer) : null;
  if (!url || (url.protocol !== "https:" && url.protocol !== "http:") || url.hash || url.search)
    throw new ValidationError("invalid SSO settings", [
      { field, message: "must be an absolute https URL without query or fragment", received: issuer },
    ]);
  if (url.protocol === "http:" && !deps.config.auth.oidc_allow_insecure_issuers)
    throw new ValidationError("invalid SSO settings", [
      {
        field,
        message:
          "must be https (plain http is allowed only with auth.oidc_allow_insecure_issuers, for tests)",
        received: issuer,
      },
    ]);
  return url;
}

async function discover(deps: DomainDeps, settings: OidcClientSettings): Promise<client.Configuration> {
  const url = checkIssuerUrl(deps, settings.issuer, "sso.oidc.issuer");
  const auth = settings.clientSecret ? client.ClientSecretPost(settings.clientSecret) : client.None();
  const execute = url.protocol === "http:" ? [client.allowInsecureRequests] : [];
  const config = await client.discovery(url, settings.clientId, undefined, auth, {
    execute,
    timeout: REQUEST_TIMEOUT_SECONDS,
  });
  config.timeout = REQUEST_TIMEOUT_SECONDS;
  return config;
}

/**
 * The provider's configuration by discovery (cached). Used when a connection is saved (so a typo in the
 * issuer is a 400 then, not a failed sign-in later) and at each sign-in.
 */
export function providerConfiguration(
  deps: DomainDeps,
  settings: OidcClientSettings,
  options: { fresh?: boolean } = {},
): Promise<client.Configuration> {
  const key = JSON.stringify([settings.issuer, settings.clientId, settings.clientSecret]);
  const cached = configurations.get(key);
  if (cached && cached.expiresAt > Date.now() && !options.fresh) return cached.config;
  const config = discover(deps, settings);
  const entry = { config, expiresAt: Date.now() + DISCOVERY_CACHE_MS };
  configurations.set(key, entry);
  // A failed discovery is not remembered (unless a newer one has replaced it meanwhile).
  config.catch(() => configurations.get(key) === entry && configurations.delete(key));
  return config;
}

/** Why discovery failed, in words an administrator can act on. */
export function describeDiscoveryFailure(error: unknown): string {
  if (error instanceof ValidationError) throw error;
  const cause = error instanceof Error ? error : new Error(String(error));
  if (cause.name === "TimeoutError" || cause.name === "AbortError")
    return `the provider did not answer within ${REQUEST_TIMEOUT_SECONDS} seconds`;
  const code = (cause as { code?: string }).code;
  if (code === "OAUTH_RESPONSE_IS_NOT_CONFORM" || code === "OAUTH_RESPONSE_IS_NOT_JSON")
    return `no OpenID Connect discovery document there (${cause.message})`;
  if (code === "OAUTH_JSON_ATTRIBUTE_COMPARISON_FAILED")
    return "the discovery document names another issuer: use exactly the issuer it names";
  return cause.message;
}

/**
 * A sign-in that cannot reach the provider, or that the provider refuses for Bulwark's own credentials
 * (invalid_client: a wrong client_secret), is the setup's trouble, not the user's: 503 naming it.
 */
export function providerUnavailable(error: unknown, during = "discovery"): UnavailableError {
  const body = error instanceof client.ResponseBodyError ? error : null;
  return new UnavailableError(
    "sso_provider_unavailable",
    body
      ? "the identity provider refused this service's client credentials"
      : "the identity provider cannot be reached",
    body
      ? `${body.error}: check sso.oidc.client_id and client_secret against the provider (${body.error_description ?? "no description"})`
      : `${during} failed: ${describeDiscoveryFailure(error)}`,
  );
}
