import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { discoverSsoConnections, SsoDiscoverySchema } from "../../domain/sso/discover-sso-connections";
import { finishOidcSignIn, startOidcSignIn } from "../../domain/sso/oidc-sign-in";
import { Uuid } from "../../lib/schema-types";
import type { AppDeps } from "../app-deps";
import { deliverTokens, RefreshCookieField } from "../browser-session";
import { requestState, type securityPlugin } from "../plugins/security";
import { errorResponse, errorResponses, redirectResponse } from "../schemas/common";
import { LoginResponse, SignedInWithCookie } from "./auth.schemas";

const RedirectUri = Type.String({
  minLength: 1,
  maxLength: 2000,
  description:
    "Where the result goes: exactly one of the connection's redirect_uris, or the console's {base_url}/console/sso/callback",
});
const ClientState = Type.String({
  minLength: 16,
  maxLength: 500,
  description: "Chosen by the client, random, at least 16 characters; comes back unchanged with the result",
});

/**
 * The SAML side, loaded on its first request: @node-saml/node-saml and its XML libraries took ~100 ms of
 * every start, for a feature most installations never use.
 */
const saml = () => import("../../domain/sso/saml-sign-in");

function redirect(location: string, status: 302 | 303): Response {
  return new Response(null, { status, headers: { location, "cache-control": "no-store" } });
}

/** /api/v1/auth/sso: single sign-on with an organization's OpenID Connect provider or SAML 2.0 IdP. */
export function ssoRoutes(deps: AppDeps, security: ReturnType<typeof securityPlugin>) {
  return new Elysia({ prefix: "/api/v1/auth/sso", tags: ["Single sign-on"] })
    .use(security)
    .post("/discover", async ({ body }) => await discoverSsoConnections(deps, body.email), {
      body: Type.Object({
        email: Type.String({
          format: "email",
          maxLength: 320,
          description: "The address the person signs in with; only its domain is looked at",
        }),
      }),
      response: { 200: SsoDiscoverySchema, ...errorResponses(400, 429) },
      detail: {
        summary: "Find the single sign-on connections for an email address",
        description:
          "Lists the enabled connections whose allowed_domains include the email's domain (ignoring case): OIDC, started with GET /auth/sso/oidc/authorize?client_id=..., and SAML of organizations on the enterprise plan, started with GET /auth/sso/saml/login?organization_id=.... An email without connections gets 200 with an empty list: the answer says nothing about whether an account exists. 400 when email is not an email address.",
        security: [],
      },
    })
    .get("/oidc/authorize", async ({ query }) => redirect(await startOidcSignIn(deps, query), 302), {
      query: Type.Object({
        client_id: Type.String({
          minLength: 1,
          maxLength: 500,
          description: "The client_id of an organization's OIDC connection: it selects the organization",
        }),
        redirect_uri: RedirectUri,
        scope: Type.Optional(
          Type.String({
            maxLength: 500,
            pattern: "^[\\x21\\x23-\\x5B\\x5D-\\x7E]+( [\\x21\\x23-\\x5B\\x5D-\\x7E]+)*$",
            description: "Space-separated; openid is always included (default: openid profile email)",
          }),
        ),
        state: ClientState,
      }),
      response: {
        302: redirectResponse(
          "To the identity provider, with an authorization-code request",
          "The provider's authorization_endpoint (from its discovery document) with `response_type` (code), `client_id`, `redirect_uri` and `state` as given, `scope` (always with openid), `nonce`, `code_challenge` and `code_challenge_method` (S256)",
        ),
        ...errorResponses(400, 409, 429, 503),
      },
      detail: {
        summary: "Start an OpenID Connect sign-in",
        description:
          "Redirects the browser to the organization's provider with an authorization-code request (PKCE S256 and a nonce kept here). The provider sends the browser back to redirect_uri with code, state and iss; the client then calls POST /auth/sso/oidc/callback. redirect_uri is one of the connection's redirect_uris or, for every connection, the console's own {base_url}/console/sso/callback (register that at the provider too for the console's sign-in). 400 sso_connection_unknown for an unknown or disabled client_id, 400 sso_redirect_uri_not_allowed (nothing is redirected), 409 sso_state_taken when the state is already in use, 503 sso_provider_unavailable when discovery fails.",
        security: [],
      },
    })
    .post(
      "/oidc/callback",
      async ({ body, request, set }) => {
        const result = await finishOidcSignIn(deps, { ...body, ip: requestState(request).ip });
        return deliverTokens(deps, set.headers, { ...result.tokens, user: result.user }, body.refresh_cookie);
      },
      {
        body: Type.Object({
          code: Type.String({ minLength: 1, maxLength: 4000, description: "From the provider's redirect" }),
          state: Type.String({ minLength: 1, maxLength: 500, description: "From the provider's redirect" }),
          iss: Type.Optional(
            Type.String({
              minLength: 1,
              maxLength: 2000,
              description: "RFC 9207: the provider's iss parameter from the redirect, when it sent one",
            }),
          ),
          ...RefreshCookieField,
        }),
        response: {
          200: Type.Union([LoginResponse, SignedInWithCookie]),
          ...errorResponses(400, 401, 429, 503),
        },
        detail: {
          summary: "Finish an OpenID Connect sign-in",
          description:
            "Answers exactly as a successful POST /auth/login. The state works once, for 10 minutes; the ID token's signature (the provider's keys), iss, aud, exp and nonce are checked, and email_verified before an email links or creates an account. Claims the ID token lacks come from userinfo. Every failure is a 401 whose details name the check (state, code, signature, iss, aud, exp, nonce, email_verified, email).",
          security: [],
        },
      },
    )
    .get(
      "/saml/metadata",
      async ({ query }) =>
        new Response(await (await saml()).samlMetadata(deps, query.organization_id), {
          headers: { "content-type": "application/samlmetadata+xml; charset=utf-8" },
        }),
      {
        query: Type.Object({ organization_id: Uuid }),
        response: {
          200: Type.String({ description: "SAML 2.0 service-provider metadata (XML)" }),
          ...errorResponses(400, 403, 404, 429),
          403: errorResponse("SAML single sign-on needs the enterprise plan (saml_requires_enterprise)"),
        },
        detail: {
          summary: "Bulwark's SAML service-provider metadata for an organization",
          description:
            "Give this to the IdP: entityID {base_url}/api/v1/auth/sso/saml/metadata?organization_id=ID, the ACS {base_url}/api/v1/auth/sso/saml/acs (HTTP-POST), signed assertions wanted. 403 saml_requires_enterprise on the standard plan.",
          security: [],
        },
      },
    )
    .get(
      "/saml/login",
      async ({ query }) => redirect(await (await saml()).startSamlSignIn(deps, query), 302),
      {
        query: Type.Object({ organization_id: Uuid, redirect_uri: RedirectUri, state: ClientState }),
        response: {
          302: redirectResponse(
            "To the IdP, with an AuthnRequest (HTTP-Redirect binding)",
            "The connection's idp_sso_url with `SAMLRequest` (the AuthnRequest, deflated and base64-encoded) and `RelayState` (the state given)",
          ),
          ...errorResponses(400, 403, 404, 429),
          403: errorResponse("SAML single sign-on needs the enterprise plan (saml_requires_enterprise)"),
        },
        detail: {
          summary: "Start a SAML sign-in",
          description:
            "Redirects the browser to the organization's IdP. The IdP posts its response to the ACS, which sends the browser on to redirect_uri with ?code=...&state=... (or ?error=...&error_description=...&state=...). redirect_uri is one of the connection's redirect_uris or, for every connection, the console's own {base_url}/console/sso/callback; any other is a 400 sso_redirect_uri_not_allowed. The request is single-use and expires after 10 minutes. 403 saml_requires_enterprise on the standard plan.",
          security: [],
        },
      },
    )
    .post(
      "/saml/acs",
      async ({ body, request }) => {
        const outcome = await (await saml()).finishSamlSignIn(deps, {
          ...body,
          ip: requestState(request).ip,
        });
        return redirect(outcome.location, 303);
      },
      {
        body: Type.Object({
          SAMLResponse: Type.String({
            minLength: 1,
            maxLength: 1_000_000,
            description: "base64 of the samlp:Response",
          }),
          RelayState: Type.Optional(Type.String({ maxLength: 2000 })),
        }),
        response: {
          303: redirectResponse(
            "Back to the client: the sign-in's redirect_uri, with a one-time code or the reason it failed",
            "The redirect_uri given to GET /auth/sso/saml/login, with `code` (for POST /auth/sso/saml/token, once, within 60 seconds) and `state` (the client's); or, when the response is refused, `error` (the reason, as in the error body), `error_description` (the check that failed, when known) and `state`",
          ),
          ...errorResponses(400, 401, 429),
        },
        detail: {
          summary: "SAML assertion consumer service (the IdP posts here)",
          description:
            "The one endpoint that takes a form body (application/x-www-form-urlencoded: SAMLResponse, RelayState). Checks the signatures of the Response and the assertion with the organization's IdP certificate, the audience, Destination and Recipient (both this URL), InResponseTo (a pending request, single-use), the validity window (3 minutes of skew) and assertion replay. A response that answers no request of this service (unsolicited, IdP-initiated) is a 401 sso_response_unsolicited; failures once the request is known go back to its redirect_uri with error.",
          security: [],
        },
      },
    )
    .post(
      "/saml/token",
      async ({ body, request, set }) => {
        const result = await (await saml()).exchangeSamlCode(deps, {
          code: body.code,
          ip: requestState(request).ip,
        });
        return deliverTokens(deps, set.headers, { ...result.tokens, user: result.user }, body.refresh_cookie);
      },
      {
        body: Type.Object({
          code: Type.String({ minLength: 1, maxLength: 200, description: "From the ACS's redirect" }),
          ...RefreshCookieField,
        }),
        response: {
          200: Type.Union([LoginResponse, SignedInWithCookie]),
          ...errorResponses(400, 401, 403, 429),
          403: errorResponse("SAML single sign-on needs the enterprise plan (saml_requires_enterprise)"),
        },
        detail: {
          summary: "Exchange a SAML sign-in's one-time code for tokens",
          description:
            "Answers exactly as a successful POST /auth/login. The code works once, within 60 seconds. 403 saml_requires_enterprise when the organization left the enterprise plan meanwhile.",
          security: [],
        },
      },
    );
}
