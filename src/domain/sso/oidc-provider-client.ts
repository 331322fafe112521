import * as client from "openid-client";
import type { DomainDeps } from "../deps";
import { UnavailableError, ValidationError } from "../errors";
import { providerFetch } from "./oidc-provider-fetch";

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
  // Every later request of this configuration (keys, token, userinfo) goes through the same fetch.
  const config = await client.discovery(url, settings.clientId, undefined, auth, {
    execute,
    timeout: REQUEST_TIMEOUT_SECONDS,
    [client.customFetch]: providerFetch(deps.config),
  });
  config.timeout = REQUEST_TIMEOUT_SECONDS;
  // openid-client trusts an ID token from the token endpoint on TLS alone (OpenID Connect Core
  // 3.1.3.7); its signature is checked against the provider's published keys too.
  client.enableNonRepudiationChecks(config);
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

/**
 * What a failed request to a provider says for the server log: the chain of errors (a refused address,
 * a refused connection, a TLS failure, a timeout, an answer that is not a discovery document...).
 */
export function providerFailureDetail(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current !== undefined && current !== null; depth++) {
    if (current instanceof Response) {
      parts.push(`HTTP ${current.status} (${current.headers.get("content-type") ?? "no content-type"})`);
      break;
    }
    if (!(current instanceof Error)) {
      // openid-client's cause for a document naming another issuer.
      const compared = current as { attribute?: unknown; expected?: unknown; body?: Record<string, unknown> };
      if (typeof compared.attribute === "string")
        parts.push(
          `${compared.attribute} ${String(compared.body?.[compared.attribute])}, expected ${String(compared.expected)}`,
        );
      break;
    }
    const code = (current as { code?: unknown }).code;
    // openid-client wraps what it does not know (a refused connection, ours) as "something went wrong".
    if (current.message !== "something went wrong")
      parts.push(`${typeof code === "string" ? code : current.name}: ${current.message}`);
    current = current.cause;
  }
  return parts.join(" <- ").slice(0, 1000);
}

/**
 * A discovery that failed when a connection is saved: the same 400 whatever answered (nothing, a closed
 * port, something that is not TLS, HTTP or an OpenID provider, an address this server does not reach),
 * so that the issuer field cannot be used to explore the server's network. The log keeps the cause.
 */
export function discoveryFailed(issuer: string, error: unknown): ValidationError {
  if (error instanceof ValidationError) return error;
  const failure = new ValidationError(
    "invalid SSO settings",
    [
      {
        field: "sso.oidc.issuer",
        message:
          "discovery failed: no OpenID provider this server may use answered at this issuer (check the URL, exactly the issuer the provider names; a provider on a private network needs the operator's auth.oidc_allow_private_issuers); the server log has the cause",
        received: issuer,
      },
    ],
    undefined,
    "sso_discovery_failed",
  );
  failure.logDetail = `discovery of ${issuer} failed: ${providerFailureDetail(error)}`;
  return failure;
}

/**
 * A sign-in that cannot reach the provider, or that the provider refuses for Bulwark's own credentials
 * (invalid_client: a wrong client_secret), is the setup's trouble, not the user's: 503 naming it. What
 * answered instead stays in the server log, as for a failed discovery on save.
 */
export function providerUnavailable(error: unknown, during = "discovery"): UnavailableError {
  if (error instanceof ValidationError) throw error;
  const body = error instanceof client.ResponseBodyError ? error : null;
  const unavailable = new UnavailableError(
    "sso_provider_unavailable",
    body
      ? "the identity provider refused this service's client credentials"
      : "the identity provider cannot be reached",
    body
      ? `${body.error}: check sso.oidc.client_id and client_secret against the provider (${body.error_description ?? "no description"})`
      : `${during} failed: no OpenID provider this server may use answered; the server log has the cause`,
  );
  if (!body) unavailable.logDetail = `${during} failed: ${providerFailureDetail(error)}`;
  return unavailable;
}
