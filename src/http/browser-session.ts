import { type TObject, Type } from "@sinclair/typebox";
import { ForbiddenError, ValidationError } from "../domain/errors";
import type { AppDeps } from "./app-deps";

/**
 * Browser sessions (the console): the refresh token is kept by the browser in an httpOnly cookie that
 * page scripts cannot read, sent only to /api/v1/auth and never by another site (SameSite=Strict).
 * The access token stays in the page's memory. A refresh or sign-out by cookie must also carry an
 * Origin header naming this server: a forged cross-site form or fetch would name its own site.
 */
export const REFRESH_COOKIE = "bulwark_refresh";
const REFRESH_COOKIE_PATH = "/api/v1/auth";

/**
 * The refresh cookie's shadow, which the console's pages can read: set and cleared with it, for as long,
 * holding no secret (always `1`). The page cannot see the httpOnly cookie, so without this it could only
 * learn that there is none by a refresh that fails; with it, a browser that never signed in sends none.
 * Scripts of the page learn only that this browser holds a session, which a refresh would tell them too.
 */
export const SIGNED_IN_COOKIE = "bulwark_signed_in";
const SIGNED_IN_COOKIE_PATH = "/console";

/** The request field that asks for the refresh token in the cookie. */
export const RefreshCookieField = {
  refresh_cookie: Type.Optional(
    Type.Boolean({
      description:
        "For browser apps: set the refresh token as an httpOnly, SameSite=Strict cookie (bulwark_refresh, path /api/v1/auth) instead of returning it; POST /auth/refresh and /auth/logout then take it from the cookie. A second cookie, bulwark_signed_in=1 (path /console, not httpOnly, no secret), is set and cleared with it, so the console's page knows whether a refresh is worth trying",
    }),
  ),
};

/** The answer of `schema` (which has refresh_token) when the refresh token went into the cookie. */
export function withRefreshCookie<T extends TObject>(schema: T, title: string) {
  const { refresh_token: _, ...properties } = schema.properties;
  return Type.Object(
    {
      ...properties,
      refresh_cookie: Type.Literal(true, {
        description: "The refresh token was set as the bulwark_refresh cookie",
      }),
    },
    { title },
  );
}

type Headers = Record<string, string | number | string[] | undefined>;

/** Adds Set-Cookie for `value` and its signed-in marker (`null` clears both). */
function setRefreshCookie(deps: AppDeps, headers: Headers, value: string | null): void {
  const secure = deps.config.server.base_url.startsWith("https:") ? "; Secure" : "";
  const maxAge = value === null ? 0 : deps.config.auth.refresh_token_ttl_seconds;
  headers["set-cookie"] = [
    `${REFRESH_COOKIE}=${value ?? ""}; Path=${REFRESH_COOKIE_PATH}; Max-Age=${maxAge}; HttpOnly; SameSite=Strict${secure}`,
    `${SIGNED_IN_COOKIE}=${value === null ? "" : "1"}; Path=${SIGNED_IN_COOKIE_PATH}; Max-Age=${maxAge}; SameSite=Strict${secure}`,
  ];
}

/** The tokens answer as asked: unchanged, or with the refresh token moved into the cookie. */
export function deliverTokens<T extends { refresh_token: string }>(
  deps: AppDeps,
  headers: Headers,
  tokens: T,
  toCookie: boolean | undefined,
): T | (Omit<T, "refresh_token"> & { refresh_cookie: true }) {
  if (!toCookie) return tokens;
  const { refresh_token, ...rest } = tokens;
  setRefreshCookie(deps, headers, refresh_token);
  return { ...rest, refresh_cookie: true as const };
}

/** Ends the browser's copy of the refresh token. */
export function clearRefreshCookie(deps: AppDeps, headers: Headers): void {
  setRefreshCookie(deps, headers, null);
}

/** The refresh token from the cookie, if the request has one. */
export function refreshTokenFromCookie(request: Request): string | null {
  for (const part of (request.headers.get("cookie") ?? "").split(";")) {
    const [name, ...value] = part.trim().split("=");
    if (name === REFRESH_COOKIE && value.length > 0 && value.join("=") !== "") return value.join("=");
  }
  return null;
}

/**
 * A request authenticated by the cookie must come from a page of this server: browsers send Origin on
 * every POST, and another site cannot make it name this one.
 */
export function assertSameOrigin(deps: AppDeps, request: Request): void {
  const origin = request.headers.get("origin");
  let originHost: string | null = null;
  try {
    originHost = origin ? new URL(origin).host : null;
  } catch {
    originHost = null;
  }
  const ownHosts = [request.headers.get("host"), new URL(deps.config.server.base_url).host];
  if (originHost === null || !ownHosts.includes(originHost))
    throw new ForbiddenError(
      "cross_site_request",
      "insufficient permissions",
      "a refresh by cookie must come from this server's own pages (its Origin header)",
    );
}

/** The refresh token of a refresh: the body's, else the cookie's (same-origin only); 400 when neither. */
export function presentedRefreshToken(
  deps: AppDeps,
  request: Request,
  fromBody: string | undefined,
): { token: string; isCookie: boolean } {
  if (fromBody !== undefined) return { token: fromBody, isCookie: false };
  const fromCookie = refreshTokenFromCookie(request);
  if (fromCookie === null)
    throw new ValidationError("invalid request body", [
      { field: "refresh_token", message: "is required (in the body, or the bulwark_refresh cookie)" },
    ]);
  assertSameOrigin(deps, request);
  return { token: fromCookie, isCookie: true };
}
