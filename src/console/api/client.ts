import createClient from "openapi-fetch";
import type { components, paths } from "./schema";

export type Schemas = components["schemas"];

/** The error body (`Error` in the OpenAPI document), as every failed call answers it. */
export interface ApiErrorBody {
  code: number;
  reason?: string;
  message: string;
  details?: string;
  request_id?: string;
  errors?: { field: string; message: string; received?: unknown }[];
}

/** A failed call: the server's status, reason, message and details, ready to show. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly body: ApiErrorBody,
  ) {
    super(body.details ? `${body.message}: ${body.details}` : body.message);
  }
  get reason(): string | undefined {
    return this.body.reason;
  }
}

let accessToken: string | null = null;
let refreshing: Promise<boolean> | null = null;
let onSessionLost: () => void = () => {};
let onMfaSetupRequired: () => void = () => {};

/** The 401 reasons a new access token cures; others (a wrong password, a wrong code) are the answer. */
const EXPIRED_TOKEN_REASONS = new Set(["token_expired", "token_invalid", "session_ended"]);

async function reasonOf(response: Response): Promise<string | undefined> {
  try {
    return ((await response.clone().json()) as { reason?: string }).reason;
  } catch {
    return undefined;
  }
}

/** The access token lives only in this module's memory: no storage a script injected later could read. */
export function setAccessToken(token: string | null): void {
  accessToken = token;
}

export function currentAccessToken(): string | null {
  return accessToken;
}

/** Called when the session can no longer be refreshed (signed out elsewhere, expired, revoked). */
export function whenSessionLost(handler: () => void): void {
  onSessionLost = handler;
}

/** Called when the organization requires MFA and this user must set a factor up before anything else. */
export function whenMfaSetupRequired(handler: () => void): void {
  onMfaSetupRequired = handler;
}

/**
 * The cookie the server sets and clears with the httpOnly refresh cookie (SIGNED_IN_COOKIE of
 * src/http/browser-session.ts): its presence is the page's only sign that a refresh cookie exists.
 */
const SIGNED_IN_COOKIE = "bulwark_signed_in";

/** Whether this browser holds a refresh cookie, as far as the page can tell (its readable shadow). */
function hasRefreshCookie(): boolean {
  return document.cookie.split(";").some((part) => part.trim() === `${SIGNED_IN_COOKIE}=1`);
}

/** Forgets a shadow whose refresh cookie the server no longer takes (ended, expired, or gone). */
function forgetRefreshCookie(): void {
  // biome-ignore lint/suspicious/noDocumentCookie: one synchronous write of a marker with no secret; the Cookie Store API is asynchronous and younger than some browsers the console serves
  document.cookie = `${SIGNED_IN_COOKIE}=; Path=/console; Max-Age=0; SameSite=Strict`;
}

/**
 * A new access token from the refresh cookie (httpOnly: the page never sees the refresh token). Without
 * the cookie's shadow nothing is asked: a browser that never signed in sends no refresh bound to fail.
 * Tabs take turns through a Web Lock: two tabs presenting the same single-use token at once would look
 * like theft and end the session.
 */
export function refreshAccessToken(): Promise<boolean> {
  refreshing ??= (async () => {
    const attempt = async () => {
      // Read inside the lock: a tab that waited may find the session ended (signed out) meanwhile.
      if (!hasRefreshCookie()) return false;
      const response = await fetch("/api/v1/auth/refresh", {
        method: "POST",
        headers: { "content-type": "application/json", accept: "application/json" },
        body: "{}",
      });
      // 400: no refresh cookie came with the shadow; 401: the session is over. Either way, next time
      // the page knows without asking.
      if (response.status === 400 || response.status === 401) forgetRefreshCookie();
      if (!response.ok) return false;
      const body = (await response.json()) as { token: string };
      accessToken = body.token;
      return true;
    };
    try {
      return navigator.locks ? await navigator.locks.request("bulwark-refresh", attempt) : await attempt();
    } catch {
      return false;
    } finally {
      refreshing = null;
    }
  })();
  return refreshing;
}

/** Every API call: the bearer token added, and one refresh-and-retry when it has expired. */
async function authorizedFetch(request: Request): Promise<Response> {
  const retry = request.clone();
  const send = (outgoing: Request) => {
    if (accessToken) outgoing.headers.set("authorization", `Bearer ${accessToken}`);
    return fetch(outgoing);
  };
  const response = await send(request);
  if (response.status === 403 && (await reasonOf(response)) === "mfa_setup_required") onMfaSetupRequired();
  if (response.status !== 401 || accessToken === null) return response;
  // Only an expired or ended token is refreshed and the call repeated: a wrong password must not be
  // sent twice (it would count twice toward the sign-in lockout).
  if (!EXPIRED_TOKEN_REASONS.has((await reasonOf(response)) ?? "")) return response;
  if (await refreshAccessToken()) return send(retry);
  accessToken = null;
  onSessionLost();
  return response;
}

/** The typed client: paths, parameters and bodies are checked against our OpenAPI document at build time. */
export const api = createClient<paths>({
  baseUrl: location.origin,
  headers: { accept: "application/json" },
  fetch: authorizedFetch,
});

/** The data of a call, or an ApiError to throw. */
export async function unwrap<T>(
  call: Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await call;
  } catch {
    throw new ApiError(0, {
      code: 0,
      message: "The server could not be reached",
      details: "check the connection and try again",
    });
  }
  if (result.response.ok) return result.data as T;
  const body = result.error as Partial<ApiErrorBody> | undefined;
  throw new ApiError(result.response.status, {
    code: result.response.status,
    message: body?.message ?? `${result.response.status} ${result.response.statusText}`,
    ...body,
  } as ApiErrorBody);
}
