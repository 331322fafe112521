import type { AnyElysia } from "elysia";
import { passwordLockout } from "../domain/auth/login-throttle";
import { getDevice } from "../domain/devices/get-device";
import type { RateLimitedError } from "../domain/errors";
import { normalizeEmail } from "../domain/users/email";
import type { AppDeps } from "./app-deps";
import { jsonAnswer } from "./json-answer";
import { requestErrorResponse } from "./plugins/error-handler";
import { decodeBody, isJsonContentType, keepReadBody } from "./plugins/json-body";
import { countUncountedRequest, openRequest, requestAddress, requireAccess } from "./plugins/security";
import { requestPeer } from "./request-path";

/** The template the fast lane answers, as Elysia names it in logs and metrics. */
export const FAST_DEVICE_ROUTE = "/api/v1/devices/:id";

/** `/api/v1/devices/<uuid>`, nothing more: any other shape (a query, an escape, a slash) goes to Elysia. */
const DEVICE_PATH =
  /^\/api\/v1\/devices\/[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const DEVICE_PATH_START = "/api/v1/devices/".length;

/**
 * Two routes answered without Elysia's pipeline, which costs several times their own work (hook chain,
 * context, header merge, response validation):
 * - `GET /api/v1/devices/:id`, the read dashboards and scripts make most;
 * - `POST /api/v1/auth/login` for an (email, address) pair that is locked out: a password-guessing
 *   script keeps sending those, and each refusal should cost as little as it can.
 *
 * Each runs the same steps through the same functions as its Elysia route: openRequest (request id,
 * credentials, rate limit, size guards), requireAccess (the `access` macro's decision), the domain
 * function, and requestErrorResponse for every failure; the routes stay in Elysia for the OpenAPI
 * document and for every request the fast lane does not take. Returns null for a request of another
 * method or path, with a query string, or whose path is not a UUID: Elysia answers those. A sign-in it
 * takes but does not refuse (not a plain JSON body of a locked pair) it hands to Elysia itself, with
 * the body it read.
 */
export function fastLane(app: AnyElysia, deps: AppDeps): (request: Request) => Promise<Response> | null {
  return (request) => {
    const url = request.url;
    // The path as requestPath reads it; normalizeRequestHost (http-server.ts) guarantees that reading.
    const start = url.indexOf("/", 11);
    if (start === -1 || url.indexOf("?", start) !== -1) return null;
    const path = url.substring(start);
    if (request.method === "GET" && DEVICE_PATH.test(path))
      return answerDeviceRead(app, deps, request, path.substring(DEVICE_PATH_START));
    if (request.method === "POST" && path === LOGIN_ROUTE) return refuseLockedSignIn(app, deps, request);
    return null;
  };
}

const LOGIN_ROUTE = "/api/v1/auth/login";
/** A sign-in body is tens of bytes; a larger one is not read here. */
const MAX_FAST_LOGIN_BODY_BYTES = 4096;
const LOGIN_FIELDS = new Set(["email", "password", "refresh_cookie"]);

/**
 * The 429 for a sign-in whose (email, address) pair is locked out, or, for any other sign-in, what
 * Elysia answers (with the body this read kept for it). Only a body LoginBody accepts as it stands is
 * judged here, so the answer is the one the route would give: the route checks the lockout first.
 */
async function refuseLockedSignIn(app: AnyElysia, deps: AppDeps, request: Request): Promise<Response> {
  const declared = request.headers.get("content-length");
  if (
    declared === null ||
    !/^\d{1,4}$/.test(declared) ||
    Number(declared) > MAX_FAST_LOGIN_BODY_BYTES ||
    !isJsonContentType(request.headers.get("content-type"))
  )
    return app.handle(request);
  const socket = requestPeer(request, app.server);
  let lockout: RateLimitedError | null = null;
  try {
    const bytes = new Uint8Array(await request.arrayBuffer());
    keepReadBody(request, bytes);
    const body = signInBody(decodeBody(bytes));
    lockout =
      body && passwordLockout(deps, normalizeEmail(body.email), requestAddress(deps, request, socket));
  } catch {
    // A body cut short, a database that cannot be read: Elysia's route meets the same failure and
    // answers it as it always does, counted against the address's budget.
  }
  if (!lockout) return app.handle(request);
  const headers: Record<string, string> = {};
  try {
    const state = await openRequest(deps, request, socket, headers);
    state.route = LOGIN_ROUTE;
    throw lockout;
  } catch (error) {
    countUncountedRequest(deps, request, headers);
    return requestErrorResponse(deps, request, error, headers);
  }
}

/** The email of a body LoginBody accepts unchanged (its fields, types and lengths), else null. */
function signInBody(text: string | null): { email: string } | null {
  let body: unknown;
  try {
    body = text === null ? null : JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) return null;
  const { email, password, refresh_cookie: refreshCookie } = body as Record<string, unknown>;
  const isValid =
    Object.keys(body).every((key) => LOGIN_FIELDS.has(key)) &&
    typeof email === "string" &&
    email.length >= 1 &&
    email.length <= 320 &&
    email.isWellFormed() &&
    typeof password === "string" &&
    password.length >= 1 &&
    password.length <= 1024 &&
    password.isWellFormed() &&
    (refreshCookie === undefined || typeof refreshCookie === "boolean");
  return isValid ? { email } : null;
}

async function answerDeviceRead(
  app: AnyElysia,
  deps: AppDeps,
  request: Request,
  deviceId: string,
): Promise<Response> {
  const headers: Record<string, string> = {};
  try {
    const state = await openRequest(deps, request, requestPeer(request, app.server), headers);
    state.route = FAST_DEVICE_ROUTE;
    const { principal } = requireAccess(state, "devices:read");
    return jsonAnswer(getDevice(deps, principal.organizationId, deviceId), headers);
  } catch (error) {
    countUncountedRequest(deps, request, headers);
    return requestErrorResponse(deps, request, error, headers);
  }
}
