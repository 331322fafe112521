import type { Static } from "@sinclair/typebox";
import { type TypeCheck, TypeCompiler } from "@sinclair/typebox/compiler";
import type { AnyElysia } from "elysia";
import { passwordLockout } from "../domain/auth/login-throttle";
import { type DeviceFacts, DeviceFactsSchema } from "../domain/devices/evaluate-compliance";
import { getDevice } from "../domain/devices/get-device";
import type { RateLimitedError } from "../domain/errors";
import { normalizeEmail } from "../domain/users/email";
import { isNestedDeeperThan } from "../lib/json-nesting";
import type { AppDeps } from "./app-deps";
import { jsonAnswer } from "./json-answer";
import { requestErrorResponse } from "./plugins/error-handler";
import { decodeBody, isJsonContentType, keepReadBody, MAX_JSON_NESTING } from "./plugins/json-body";
import { normalizeIdFields } from "./plugins/normalize-input";
import {
  countUncountedRequest,
  openRequest,
  pinPeer,
  requestAddress,
  requireAccess,
  requireDevice,
} from "./plugins/security";
import { requestPeer } from "./request-path";
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
 * macros' decisions), the domain function, and requestErrorResponse for every failure; the routes stay in Elysia for the OpenAPI
 * document and for every request the fast lane does not take. Returns null for a request of another
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
  // The peer as it is now (see pinPeer): the body is read first.
  const socket = pinPeer(deps, request, app.server);
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

const CHECK_IN_ROUTE = "/api/v1/agent/checkin";
/** Every field of a check-in fits in ~600 bytes; a larger body is left to the route, unread. */
const MAX_FAST_CHECK_IN_BODY_BYTES = 4096;
const CHECK_IN_FIELDS = new Set(Object.keys(CheckInBody.properties));
const FACT_NAMES = Object.keys(DeviceFactsSchema.properties) as (keyof DeviceFacts)[];
/** Compiled on the first check-in, not at start (every start would pay for it). */
let compiledCheckInBody: TypeCheck<typeof CheckInBody> | null = null;

/**
 * A check-in whose body CheckInBody accepts as it stands: a JSON object of its fields only (facts are
 * held to their own fields by the schema), valid UTF-8 and well-formed text, of at most 4 KiB. Elysia
 * would validate such a body without refusing or dropping anything, so the route's steps are run here
 * in the route's order: openRequest, the `device` macro's decision (requireDevice), the check-in and its
 * answer, requestErrorResponse for any failure. What Elysia's normalisation does to it is done too: ids
 * lower-cased (normalize-input), facts rebuilt in the schema's order (Elysia's cleaner copies them so;
 * they are stored as written). Any other body (an unknown field, a wrong type, broken JSON, a chunked
 * upload) goes to Elysia with the bytes read, and is answered there.
 */
async function answerPlainCheckIn(app: AnyElysia, deps: AppDeps, request: Request): Promise<Response> {
  const declared = request.headers.get("content-length");
  if (
    declared === null ||
    !/^\d{1,4}$/.test(declared) ||
    Number(declared) > MAX_FAST_CHECK_IN_BODY_BYTES ||
    !isJsonContentType(request.headers.get("content-type"))
  )
    return app.handle(request);
  // The peer as it is now (see pinPeer): the body is read first.
  const peer = pinPeer(deps, request, app.server);
  let body: Static<typeof CheckInBody> | null = null;
  try {
    const bytes = new Uint8Array(await request.arrayBuffer());
    keepReadBody(request, bytes);
    body = checkInBody(decodeBody(bytes));
  } catch {
    // A body cut short: Elysia's route meets the same failure and answers it as it always does.
  }
  if (!body) return app.handle(request);
  const headers: Record<string, string> = {};
  try {
    const state = await openRequest(deps, request, peer, headers);
    state.route = CHECK_IN_ROUTE;
    return await answerCheckIn(deps, requireDevice(state).device, body, headers);
  } catch (error) {
    countUncountedRequest(deps, request, headers);
    return requestErrorResponse(deps, request, error, headers);
  }
}

/** The body of a check-in CheckInBody accepts unchanged, normalised as Elysia normalises it; else null. */
function checkInBody(text: string | null): Static<typeof CheckInBody> | null {
  if (text === null || isNestedDeeperThan(text, MAX_JSON_NESTING)) return null;
  let body: unknown;
  try {
    // An empty body is an empty report, as the route's parser reads it.
    body = text.trim() === "" ? {} : JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof body !== "object" || body === null || Array.isArray(body)) return null;
  for (const key in body) if (!CHECK_IN_FIELDS.has(key)) return null;
  compiledCheckInBody ??= TypeCompiler.Compile(CheckInBody);
  if (!compiledCheckInBody.Check(body)) return null;
  // Text fields that are not well-formed Unicode are refused by the parser: Elysia names them.
  const { agent_version: agentVersion, os_version: osVersion, policy_id: policyId } = body;
  for (const text of [agentVersion, osVersion, policyId])
    if (typeof text === "string" && !text.isWellFormed()) return null;
  normalizeIdFields(body);
  if (body.facts) {
    const facts: DeviceFacts = {};
    for (const name of FACT_NAMES) if (body.facts[name] !== undefined) facts[name] = body.facts[name];
    body.facts = facts;
  }
  return body;
}
