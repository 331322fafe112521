import { createHash } from "node:crypto";
import { and, eq, gt, isNull } from "drizzle-orm";
import * as client from "openid-client";
import { withTransaction } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { organizations, ssoRequests } from "../../db/tables";
import { addSeconds, toIso } from "../../lib/clock";
import type { AuthDeps } from "../auth/auth-deps";
import type { TokenPair } from "../auth/issue-session";
import type { SignedInUser } from "../auth/sign-in";
import type { DomainDeps } from "../deps";
import type { DomainError } from "../errors";
import { ConflictError, UnauthenticatedError, ValidationError } from "../errors";
import { providerConfiguration, providerUnavailable } from "./oidc-provider-client";
import { findOidcConnection } from "./prepare-sso-settings";
import { assertRedirectUriAllowed, readStoredSso, type StoredOidc } from "./sso-settings-view";
import { auditSsoRefusal, signInWithSsoIdentity } from "./sso-user";

/** How long a sign-in may take at the provider: the state is single-use and expires after this. */
export const OIDC_STATE_TTL_SECONDS = 600;

const stateKey = (state: string) => `oidc:${createHash("sha256").update(state).digest("hex")}`;

function clientSettings(deps: DomainDeps, oidc: StoredOidc) {
  return {
    issuer: oidc.issuer ?? "",
    clientId: oidc.client_id ?? "",
    clientSecret: oidc.client_secret ? deps.secrets.open(oidc.client_secret) : "",
  };
}

/**
 * Starts an authorization-code sign-in with PKCE (S256) and a nonce: `client_id` selects the organization
 * whose connection uses it, `redirect_uri` must be one of the connection's or the console's callback, and
 * the state (chosen by the client, kept here with the nonce and code verifier) is single-use for 10
 * minutes. Returns the provider's authorization URL to redirect to.
 */
export async function startOidcSignIn(
  deps: DomainDeps,
  input: { client_id: string; redirect_uri: string; scope?: string; state: string },
): Promise<string> {
  const connection = await findOidcConnection(deps, input.client_id);
  if (!connection)
    throw new ValidationError(
      "unknown single sign-on client",
      [{ field: "client_id", message: "no organization has an enabled OIDC connection with this client_id" }],
      undefined,
      "sso_connection_unknown",
    );
  const { organization, oidc } = connection;
  assertRedirectUriAllowed(oidc, input.redirect_uri, deps.config.server.base_url);
  const scopes = new Set(["openid", ...(input.scope ?? "openid profile email").split(" ").filter(Boolean)]);
  let config: client.Configuration;
  try {
    config = await providerConfiguration(deps, clientSettings(deps, oidc));
  } catch (error) {
    throw providerUnavailable(error);
  }
  const nonce = client.randomNonce();
  const codeVerifier = client.randomPKCECodeVerifier();
  const codeChallenge = await client.calculatePKCECodeChallenge(codeVerifier);
  const now = deps.clock.now();
  const inserted = await withTransaction(
    deps.db,
    async (tx) =>
      await tx
        .insert(ssoRequests)
        .values({
          id: stateKey(input.state),
          provider: "oidc",
          organizationId: organization.id,
          redirectUri: input.redirect_uri,
          nonce,
          codeVerifier: deps.secrets.seal(codeVerifier),
          createdAt: toIso(now),
          expiresAt: toIso(addSeconds(now, OIDC_STATE_TTL_SECONDS)),
        })
        .onConflictDoNothing()
        .returning({ id: ssoRequests.id }),
  );
  if (inserted.length === 0)
    throw new ConflictError(
      "sso_state_taken",
      "this state is already in use",
      "state: choose a new random state for every sign-in",
    );
  return client
    .buildAuthorizationUrl(config, {
      redirect_uri: input.redirect_uri,
      scope: [...scopes].join(" "),
      state: input.state,
      nonce,
      code_challenge: codeChallenge,
      code_challenge_method: "S256",
    })
    .toString();
}

/** Which check an openid-client failure is, for the 401's details. */
function describeFailure(
  error: unknown,
): { reason: "sso_code_rejected" | "sso_id_token_invalid"; details: string } | null {
  // The provider refusing Bulwark's own credentials is a setup problem (503), not the user's.
  if (
    error instanceof client.ResponseBodyError &&
    ["invalid_client", "unauthorized_client"].includes(error.error)
  )
    return null;
  if (error instanceof client.ResponseBodyError)
    return {
      reason: "sso_code_rejected",
      details: `code: the identity provider refused the authorization code (${error.error}${error.error_description ? `: ${error.error_description}` : ""})`,
    };
  if (!(error instanceof Error)) return null;
  const code = (error as { code?: string }).code ?? "";
  if (!code.startsWith("OAUTH_") || code === "OAUTH_HTTP_REQUEST_FORBIDDEN") return null;
  // openid-client wraps oauth4webapi's error, whose message and cause name the check that failed.
  const inner = error.cause instanceof Error && (error.cause as { code?: string }).code ? error.cause : error;
  const cause = (inner as { cause?: { claim?: string } }).cause;
  const message = inner.message;
  let check = cause?.claim;
  if (!check) {
    if (/"iss" \(issuer\) response parameter/.test(message)) check = "iss";
    else if (/signature/i.test(message)) check = "signature";
    else if (code === "OAUTH_JWT_TIMESTAMP_CHECK_FAILED") check = "exp";
    else if (/id_token|ID Token/.test(message)) check = "id_token";
    else check = "response";
  }
  return { reason: "sso_id_token_invalid", details: `${check}: ${message}` };
}

/**
 * Finishes the sign-in the provider sent back to the client's redirect_uri: consumes the state, exchanges
 * the code (with the PKCE verifier), checks the ID token (signature by the provider's keys, iss, aud, exp,
 * nonce), reads claims the ID token lacks from userinfo, then signs the user in. Every failure is a 401
 * whose details name the check.
 */
export async function finishOidcSignIn(
  deps: AuthDeps,
  input: { code: string; state: string; iss?: string; ip: string },
): Promise<{ tokens: TokenPair; user: SignedInUser }> {
  const now = deps.clock.now();
  const key = stateKey(input.state);
  const request = await firstRow(deps.db.select().from(ssoRequests).where(eq(ssoRequests.id, key)));
  const claimed = await withTransaction(
    deps.db,
    async (tx) =>
      await tx
        .update(ssoRequests)
        .set({ usedAt: toIso(now) })
        .where(
          and(eq(ssoRequests.id, key), isNull(ssoRequests.usedAt), gt(ssoRequests.expiresAt, toIso(now))),
        )
        .returning({ id: ssoRequests.id }),
  );
  if (!request || claimed.length === 0) {
    const details = !request
      ? "state: no sign-in was started with this state (GET /auth/sso/oidc/authorize first)"
      : request.usedAt
        ? "state: already used; each sign-in's state works once"
        : `state: expired; a sign-in must finish within ${OIDC_STATE_TTL_SECONDS / 60} minutes`;
    const error = new UnauthenticatedError("sso_state_invalid", "single sign-on failed", details);
    if (!request) throw error;
    throw await auditSsoRefusal(deps, request.organizationId, "oidc", null, input.ip, error);
  }
  const { organizationId } = request;
  const organization = await firstRow(
    deps.db.select().from(organizations).where(eq(organizations.id, organizationId)),
  );
  const oidc = organization ? readStoredSso(organization.ssoSettings).oidc : undefined;
  const refuse = (error: UnauthenticatedError): Promise<DomainError> =>
    auditSsoRefusal(deps, organizationId, "oidc", null, input.ip, error);
  if (!oidc?.enabled)
    throw await refuse(
      new UnauthenticatedError(
        "sso_state_invalid",
        "single sign-on failed",
        "state: the organization's OIDC connection was turned off after this sign-in started",
      ),
    );
  const connection: StoredOidc = oidc;
  let config: client.Configuration;
  try {
    config = await providerConfiguration(deps, clientSettings(deps, connection));
  } catch (error) {
    throw providerUnavailable(error);
  }
  const callback = new URL(request.redirectUri);
  callback.searchParams.set("code", input.code);
  callback.searchParams.set("state", input.state);
  // RFC 9207: the provider's `iss` proves which provider answered; absent, the connection's is assumed.
  callback.searchParams.set("iss", input.iss ?? config.serverMetadata().issuer);
  let tokens: Awaited<ReturnType<typeof client.authorizationCodeGrant>>;
  try {
    tokens = await client.authorizationCodeGrant(config, callback, {
      pkceCodeVerifier: deps.secrets.open(request.codeVerifier ?? ""),
      expectedNonce: request.nonce ?? "",
      expectedState: input.state,
      idTokenExpected: true,
    });
  } catch (error) {
    const failure = describeFailure(error);
    if (!failure) throw providerUnavailable(error, "the token request");
    throw await refuse(new UnauthenticatedError(failure.reason, "single sign-on failed", failure.details));
  }
  const claims = tokens.claims();
  if (!claims)
    throw await refuse(
      new UnauthenticatedError(
        "sso_id_token_invalid",
        "single sign-on failed",
        "id_token: the provider sent none",
      ),
    );
  let email = typeof claims.email === "string" ? claims.email : undefined;
  let emailVerified = typeof claims.email_verified === "boolean" ? claims.email_verified : undefined;
  let name = typeof claims.name === "string" ? claims.name : undefined;
  if (email === undefined || emailVerified === undefined || name === undefined) {
    try {
      const info = await client.fetchUserInfo(config, tokens.access_token, claims.sub);
      email ??= typeof info.email === "string" ? info.email : undefined;
      emailVerified ??= typeof info.email_verified === "boolean" ? info.email_verified : undefined;
      name ??= typeof info.name === "string" ? info.name : undefined;
    } catch (error) {
      const failure = describeFailure(error);
      if (!failure) throw providerUnavailable(error, "the userinfo request");
      throw await refuse(
        new UnauthenticatedError(
          "sso_id_token_invalid",
          "single sign-on failed",
          `userinfo: ${failure.details}`,
        ),
      );
    }
  }
  return signInWithSsoIdentity(
    deps,
    organizationId,
    connection,
    {
      provider: "oidc",
      issuer: claims.iss,
      subject: claims.sub,
      email: email ?? null,
      emailVerified: emailVerified === true,
      name: name ?? null,
    },
    input.ip,
  );
}
