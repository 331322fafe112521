import type { Static } from "@sinclair/typebox";
import { type TypeCheck, TypeCompiler } from "@sinclair/typebox/compiler";
import type { AnyElysia } from "elysia";
import { passwordLockout } from "../domain/auth/login-throttle";
import { getDevice } from "../domain/devices/get-device";
import type { RateLimitedError } from "../domain/errors";
import { databaseUnavailableError } from "../domain/system/check-database";
import { normalizeEmail } from "../domain/users/email";
import type { AppDeps } from "./app-deps";
import { jsonAnswer } from "./json-answer";
import { requestErrorResponse } from "./plugins/error-handler";
import { decodeBody, isJsonContentType, keepReadBody, parseJsonText } from "./plugins/json-body";
import { normalizeIdFields } from "./plugins/normalize-input";
import {
  countUncountedRequest,
  openRequest,
  pinPeer,
  type RequestState,
  requestAddress,
  requireAccess,
  requireDevice,
} from "./plugins/security";
import { type Peer, requestPeer } from "./request-path";
import { answerCheckIn } from "./routes/agent.routes";
import { CheckInBody } from "./routes/agent.schemas";

/** The template the fast lane answers, as Elysia names it in logs and metrics. */
export const FAST_DEVICE_ROUTE = "/api/v1/devices/:id";

/** `/api/v1/devices/<uuid>`, nothing more: any other shape (a query, an escape, a slash) goes to Elysia. */
const DEVICE_PATH =
  /^\/api\/v1\/devices\/[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const DEVICE_PATH_START = "/api/v1/devices/".length;

/**
 * Three routes answered without Elysia's pipeline, which costs several times their own work (hook chain,
 * context, header merge, response validation):
 * - `GET /api/v1/devices/:id`, the read dashboards and scripts make most;
 * - `POST /api/v1/auth/login` for an (email, address) pair that is locked out: a password-guessing
 *   script keeps sending those, and each refusal should cost as little as it can;
 * - `POST /api/v1/agent/checkin` with a body the route accepts as it stands: every device of a fleet
 *   sends one every few minutes.
 *
 * Each runs the same steps through the same functions as its Elysia route: openRequest (request id,
 * credentials, rate limit, size guards), requireAccess or requireDevice (the `access` and `device`
 * macros' decisions), the domain function, and requestErrorResponse for every failure
 * (answerOutsideElysia); the routes stay in Elysia for the OpenAPI document and for every request the fast lane does not take. Returns null for a request of another
 * method or path, with a query string, or whose path is not a UUID: Elysia answers those. A sign-in it
 * takes but does not refuse (not a plain JSON body of a locked pair), or a check-in whose body is not
 * one it can judge, it hands to Elysia itself, with the body it read.
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
    if (request.method === "POST" && path === CHECK_IN_ROUTE) return answerPlainCheckIn(app, deps, request);
    return null;
  };
}

const LOGIN_ROUTE = "/api/v1/auth/login";
const LOGIN_FIELDS = new Set(["email", "password", "refresh_cookie"]);

/**
 * The 429 for a sign-in whose (email, address) pair is locked out, or, for any other sign-in, what
 * Elysia answers (with the body this read kept for it). Only a body LoginBody accepts as it stands is
 * judged here, so the answer is the one the route would give: the route checks the lockout first.
 */
async function refuseLockedSignIn(app: AnyElysia, deps: AppDeps, request: Request): Promise<Response> {
  const read = await readSmallJsonBody(app, deps, request);
  if (!read) return app.handle(request);
  let lockout: RateLimitedError | null = null;
  try {
    const body = signInBody(read.value);
    lockout =
      body &&
      (await passwordLockout(deps, normalizeEmail(body.email), requestAddress(deps, request, read.peer)));
  } catch (error) {
    // A database that cannot serve is answered here (503, counted against the address's budget as the
    // route counts it) rather than waited for a second time by the route. Any other failure: Elysia's
    // route meets it too and answers it as it always does.
    const unavailable = databaseUnavailableError(error);
    if (unavailable)
      return answerOutsideElysia(deps, request, read.peer, LOGIN_ROUTE, () => {
        throw unavailable;
      });
  }
  if (!lockout) return app.handle(request);
  const refusal = lockout;
  return answerOutsideElysia(deps, request, read.peer, LOGIN_ROUTE, () => {
    throw refusal;
  });
}

/** The email of a body LoginBody accepts unchanged (its fields, types and lengths), else null. */
function signInBody(body: unknown): { email: string } | null {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return null;
  const { email, password, refresh_cookie: refreshCookie } = body as Record<string, unknown>;
  const isValid =
    Object.keys(body).every((key) => LOGIN_FIELDS.has(key)) &&
    typeof email === "string" &&
    email.length >= 1 &&
    email.length <= 320 &&
    typeof password === "string" &&
    password.length >= 1 &&
    password.length <= 1024 &&
    (refreshCookie === undefined || typeof refreshCookie === "boolean");
  return isValid ? { email } : null;
}

async function answerDeviceRead(
  app: AnyElysia,
  deps: AppDeps,
  request: Request,
  deviceId: string,
): Promise<Response> {
  return answerOutsideElysia(
    deps,
    request,
    requestPeer(request, app.server),
    FAST_DEVICE_ROUTE,
    async (state, headers) => {
      const { principal } = requireAccess(state, "devices:read");
      return jsonAnswer(await getDevice(deps, principal.organizationId, deviceId), headers);
    },
  );
}

const CHECK_IN_ROUTE = "/api/v1/agent/checkin";
const CHECK_IN_FIELDS = new Set(Object.keys(CheckInBody.properties));
/** Compiled on the first check-in, not at start (every start would pay for it). */
let compiledCheckInBody: TypeCheck<typeof CheckInBody> | null = null;

/**
 * A check-in whose body CheckInBody accepts as it stands: a JSON object of its fields only (facts may
 * hold names the server does not know, which the schema admits and the check-in keeps; an enforcement
 * entry is held to its own fields by the schema), as the route's parser reads it. Elysia would validate
 * such a body without refusing or dropping anything, so the route's steps are run here in the route's
 * order: openRequest, the `device` macro's decision (requireDevice), the check-in and its answer,
 * requestErrorResponse for any failure. What Elysia's normalisation does to it is done too: ids
 * lower-cased (normalize-input); the order of facts and of an entry's fields, which Elysia's cleaner
 * may change, answerCheckIn sets for both. Any other body (an unknown top-level field, an unknown
 * field in an enforcement entry, a wrong type, broken JSON, a chunked upload) goes to Elysia with the
 * bytes read, and is answered there.
 */
async function answerPlainCheckIn(app: AnyElysia, deps: AppDeps, request: Request): Promise<Response> {
  const read = await readSmallJsonBody(app, deps, request);
  const body = read && checkInBody(read.value);
  if (!read || !body) return app.handle(request);
  return answerOutsideElysia(deps, request, read.peer, CHECK_IN_ROUTE, (state, headers) =>
    answerCheckIn(deps, requireDevice(state).device, body, headers),
  );
}

/** A check-in body CheckInBody accepts unchanged, normalised as Elysia normalises it; else null. */
function checkInBody(body: unknown): Static<typeof CheckInBody> | null {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return null;
  for (const key in body) if (!CHECK_IN_FIELDS.has(key)) return null;
  compiledCheckInBody ??= TypeCompiler.Compile(CheckInBody);
  if (!compiledCheckInBody.Check(body)) return null;
  normalizeIdFields(body);
  return body;
}

/**
 * The most of a body the fast lane reads: a sign-in, or a check-in with its facts and a policy's worth
 * of enforcement entries with their details; a longer one is read by Elysia.
 */
const MAX_FAST_BODY_BYTES = 16_384;

/**
 * A small JSON body as the route's parser reads it (`value`: an empty body is {}, any body the parser
 * would refuse or that cannot be read is undefined), with the request's peer pinned before reading (see
 * pinPeer) and the bytes kept for Elysia (keepReadBody). Null, and nothing read, for a request without
 * a declared length of at most 16 KiB or without a JSON content type: Elysia reads those.
 */
async function readSmallJsonBody(
  app: AnyElysia,
  deps: AppDeps,
  request: Request,
): Promise<{ peer: Peer | null | undefined; value: unknown } | null> {
  const declared = request.headers.get("content-length");
  if (
    declared === null ||
    !/^\d{1,5}$/.test(declared) ||
    Number(declared) > MAX_FAST_BODY_BYTES ||
    !isJsonContentType(request.headers.get("content-type"))
  )
    return null;
  const peer = pinPeer(deps, request, app.server);
  let value: unknown;
  try {
    const bytes = new Uint8Array(await request.arrayBuffer());
    keepReadBody(request, bytes);
    const text = decodeBody(bytes);
    if (text !== null) value = text.trim() === "" ? {} : parseJsonText(text);
  } catch {
    // A body cut short, or one the parser refuses: Elysia's route meets the same failure and answers it.
  }
  return { peer, value };
}

/**
 * Opens the request as the security plugin's onRequest does, names its route, and answers with
 * `answer`; any failure (a 429 of the rate limit, a 401, the domain's errors) is answered as the error
 * handler answers it, counted against the address's budget when the request was not counted yet.
 */
async function answerOutsideElysia(
  deps: AppDeps,
  request: Request,
  peer: Peer | null | undefined,
  route: string,
  answer: (state: RequestState, headers: Record<string, string>) => Response | Promise<Response>,
): Promise<Response> {
  const headers: Record<string, string> = {};
  try {
    const state = await openRequest(deps, request, peer, headers);
    state.route = route;
    return await answer(state, headers);
  } catch (error) {
    await countUncountedRequest(deps, request, headers);
    return requestErrorResponse(deps, request, error, headers);
  }
}
