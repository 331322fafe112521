import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { createApiKey, listApiKeys, revokeApiKey } from "../../domain/auth/api-keys";
import { refreshSession } from "../../domain/auth/refresh-session";
import { signInWithPassword } from "../../domain/auth/sign-in";
import { signOut } from "../../domain/auth/sign-out";
import { MfaChallengeSchema } from "../../domain/mfa/mfa-view";
import type { AppDeps } from "../app-deps";
import {
  clearRefreshCookie,
  deliverTokens,
  presentedRefreshToken,
  refreshTokenFromCookie,
} from "../browser-session";
import { requestState, type securityPlugin } from "../plugins/security";
import {
  errorResponses,
  IdParams,
  MessageSchema,
  PageQuery,
  Paginated,
  pageOf,
  paginate,
} from "../schemas/common";
import {
  ApiKeySchema,
  CreateApiKeyBody,
  CreatedApiKeySchema,
  LoginBody,
  LoginResponse,
  LogoutBody,
  RefreshBody,
  RefreshResponse,
  SignedInWithCookie,
} from "./auth.schemas";

/** /api/v1/auth: password login, refresh, logout and API keys. */
export function authRoutes(deps: AppDeps, security: ReturnType<typeof securityPlugin>) {
  return new Elysia({ prefix: "/api/v1/auth", tags: ["Authentication"] })
    .use(security)
    .post(
      "/login",
      async ({ body, request, set }) => {
        const result = await signInWithPassword(deps, {
          email: body.email,
          password: body.password,
          ip: requestState(request).ip,
        });
        if (result.kind === "mfa_required") return result.challenge;
        const signedIn = {
          ...result.tokens,
          user: result.user,
          ...(result.mfaSetupRequired ? { mfa_setup_required: true as const } : {}),
        };
        return deliverTokens(deps, set.headers, signedIn, body.refresh_cookie);
      },
      {
        body: LoginBody,
        response: {
          200: Type.Union([LoginResponse, SignedInWithCookie, MfaChallengeSchema]),
          ...errorResponses(400, 401, 429),
        },
        detail: {
          summary: "Sign in with email and password",
          description:
            "Returns an access token (24 h) and a single-use refresh token; for a user with a second factor, an MFA challenge instead (mfa_required, mfa_token, mfa_methods), finished at POST /auth/mfa/verify. After 5 failed attempts (wrong passwords and wrong MFA codes alike) for one email from one address, answers 429 for 15 minutes.",
          security: [],
        },
      },
    )
    .post(
      "/refresh",
      async ({ body, request, set }) => {
        const presented = presentedRefreshToken(deps, request, body.refresh_token);
        const tokens = await refreshSession(deps, {
          refreshToken: presented.token,
          ip: requestState(request).ip,
          isBrowserCookie: presented.isCookie,
        });
        return deliverTokens(deps, set.headers, tokens, presented.isCookie);
      },
      {
        body: RefreshBody,
        response: { 200: RefreshResponse, ...errorResponses(400, 401, 403, 429) },
        detail: {
          summary: "Exchange a refresh token for a new token pair",
          description:
            "The presented refresh token is used up. Presenting it again revokes the whole session. Browser apps send no refresh_token: the bulwark_refresh cookie carries it (and gets the new one), and the request must come from this server's pages (Origin header; else 403 cross_site_request). A cookie used less than 30 seconds ago whose replacement is still unused (the page was reloaded while its refresh was in flight and never stored the new cookie) gets a new pair, and the lost replacement ends.",
          security: [],
        },
      },
    )
    .post(
      "/logout",
      async ({ body, principal, actor, request, set }) => {
        const fromCookie = refreshTokenFromCookie(request);
        await signOut(deps, principal, actor, body?.refresh_token ?? fromCookie ?? undefined);
        if (fromCookie !== null) clearRefreshCookie(deps, set.headers);
        return { message: "signed out" };
      },
      {
        access: "self",
        body: Type.Optional(LogoutBody),
        response: { 200: MessageSchema, ...errorResponses(400, 401, 429) },
        detail: { summary: "Sign out: the access token and the refresh token stop working at once" },
      },
    )
    .post(
      "/api-keys",
      async ({ body, principal, actor, set }) => {
        set.status = 201;
        return await createApiKey(deps, principal, actor, {
          name: body.name,
          scopes: body.scopes,
          expiresInDays: body.expires_in_days,
        });
      },
      {
        access: "authenticated",
        body: CreateApiKeyBody,
        response: { 201: CreatedApiKeySchema, ...errorResponses(400, 401, 403, 429) },
        detail: {
          summary: "Create an API key",
          description:
            "The key is returned once, in `key`. Present it as `Authorization: Bearer <key>` or `X-API-Key: <key>`.",
        },
      },
    )
    .get(
      "/api-keys",
      async ({ query, principal }) => {
        const page = pageOf(query);
        return paginate(await listApiKeys(deps, principal, page), page);
      },
      {
        access: "authenticated",
        query: Type.Object(PageQuery),
        response: { 200: Paginated(ApiKeySchema), ...errorResponses(400, 401, 429) },
        detail: { summary: "List API keys (your own; admins see the organization's); never the key itself" },
      },
    )
    .delete(
      "/api-keys/:id",
      async ({ params, principal, actor, set }) => {
        await revokeApiKey(deps, principal, actor, params.id);
        set.status = 204;
      },
      {
        access: "authenticated",
        params: IdParams,
        response: { 204: Type.Void({ description: "Revoked" }), ...errorResponses(401, 403, 404, 429) },
        detail: { summary: "Revoke an API key; it stops working at once" },
      },
    );
}
