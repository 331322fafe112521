import { Elysia } from "elysia";
import { authenticateCredential } from "../../domain/auth/authenticate";
import { actorOf, type Principal } from "../../domain/auth/principal";
import { hasScope, type Scope } from "../../domain/auth/scopes";
import type { Actor } from "../../domain/deps";
import {
  authenticateDeviceToken,
  DEVICE_TOKEN_PREFIX,
  type DevicePrincipal,
} from "../../domain/devices/authenticate-device";
import { findEnrollmentTokenId } from "../../domain/devices/consume-enrollment-token";
import {
  BodyTooLargeError,
  DomainError,
  ForbiddenError,
  HeadersTooLargeError,
  RateLimitedError,
  UnauthenticatedError,
  UnavailableError,
  ValidationError,
} from "../../domain/errors";
import { authenticateDeviceCertificate } from "../../domain/pki/device-certificates";
import { databaseUnavailableError } from "../../domain/system/check-database";
import type { AppDeps } from "../app-deps";
import { parseClientCertHeader } from "../client-certificate";
import { type Peer, rememberPeer, requestPath, requestPeer } from "../request-path";
import type { TlsClient } from "../tls-front";
import { forwardedClientAddress, isTrustedProxy } from "../trusted-proxies";

/** Per-request facts gathered once in onRequest and read by the route macros. */
export interface RequestState {
  requestId: string;
  ip: string;
  principal: Principal | null;
  /** Set instead of `principal` when the credential is a device token (agent endpoints). */
  device: DevicePrincipal | null;
  authError: DomainError | null;
  /** False until the request has been counted against a rate-limit budget. */
  isCounted: boolean;
  /** The headers gathered for the response (request id, rate limits), for answers made outside Elysia. */
  responseHeaders: Record<string, unknown>;
  /** The route template that answers (`/api/v1/devices/:id`), once routing has found one. */
  route: string | null;
}

const states = new WeakMap<Request, RequestState>();

/** A request's state before its credentials are checked, routed or counted. */
function newRequestState(requestId: string, ip: string, headers: Record<string, unknown>): RequestState {
  return {
    requestId,
    ip,
    principal: null,
    device: null,
    authError: null,
    isCounted: false,
    responseHeaders: headers,
    route: null,
  };
}

/** The state onRequest stored for this request, if it got that far. */
export function requestStateIfAny(request: Request): RequestState | undefined {
  return states.get(request);
}

/** The state onRequest stored for this request. */
export function requestState(request: Request): RequestState {
  const state = states.get(request);
  if (!state) throw new Error("request state missing: security plugin not installed");
  return state;
}

const PER_ADDRESS_PATHS = new Set(["/api/v1/auth/login", "/api/v1/auth/refresh"]);
/**
 * A load balancer's health probe and a Prometheus scrape have a per-address budget of their own: other
 * traffic from the same address (every client behind a proxy without trust_proxy) must not get them
 * refused, which would take the only server out of a load balancer or blind the monitoring.
 */
const PROBE_PATHS = new Set(["/api/v1/health", "/metrics"]);
/** Enrollment is counted per enrollment token, once the body naming the token has been read. */
const ENROLL_PATH = "/api/v1/devices/enroll";
const CONSOLE_PATHS = new Set(["/", "/console"]);
/** Larger request headers are refused (431); Bun's parser is given room up to 256 KiB to let us say so. */
const MAX_HEADER_BYTES = 16 * 1024;
const REQUEST_ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;
export const MAX_BODY_BYTES = 1024 * 1024;

/**
 * The address of a request's peer: behind Bulwark's own TLS front the socket is a loopback connection
 * and the front knows the client; in-process (tests) there is no socket, and loopback stands for it.
 */
function peerAddress(deps: AppDeps, socket: Peer | null | undefined): string {
  return tlsClientOf(deps, socket)?.ip ?? socket?.address ?? "127.0.0.1";
}

/**
 * The client address: the peer's, or, when the peer is a trusted proxy (trusted-proxies.ts), the
 * address it forwarded in X-Forwarded-For if that is one.
 */
function clientAddress(deps: AppDeps, request: Request, peer: string, isProxied: boolean): string {
  if (!isProxied) return peer;
  return forwardedClientAddress(deps.config.server, request.headers.get("x-forwarded-for")) ?? peer;
}

/** The client address of a request whose socket peer is `socket` (clientAddress). */
export function requestAddress(deps: AppDeps, request: Request, socket: Peer | null | undefined): string {
  const peer = peerAddress(deps, socket);
  return clientAddress(deps, request, peer, isTrustedProxy(deps.config.server, peer));
}

/**
 * The request's peer with its TLS front record looked up now, and kept as the request's peer. The fast
 * lane reads a body before it opens the request, and the TLS front forgets a client that hangs up
 * meanwhile; Elysia's route looks the record up before the body is read. With this, the fast lane and
 * Elysia, when the lane hands the request on, read the record as it was when the request arrived.
 */
export function pinPeer(
  deps: AppDeps,
  request: Request,
  server: Parameters<typeof requestPeer>[1],
): Peer | null | undefined {
  const socket = requestPeer(request, server);
  if (!socket) return socket;
  const peer = { address: socket.address, port: socket.port, tls: tlsClientOf(deps, socket) };
  rememberPeer(request, peer);
  return peer;
}

function tlsClientOf(deps: AppDeps, socket: Peer | null | undefined): TlsClient | undefined {
  return socket && "tls" in socket ? socket.tls : deps.tlsClients?.get(socket);
}

/** The credential from `Authorization: Bearer` or `X-API-Key`, if any. */
function presentedCredential(request: Request): string | null {
  const authorization = request.headers.get("authorization");
  if (authorization) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    return match?.[1] ?? "";
  }
  return request.headers.get("x-api-key");
}

function headerBytes(request: Request): number {
  let size = 0;
  for (const [name, value] of request.headers) size += name.length + value.length + 4;
  return size;
}

/** True when the declared Content-Length is over MAX_BODY_BYTES; undeclared bodies are measured while parsed. */
function isDeclaredBodyTooLarge(request: Request): boolean {
  return Number(request.headers.get("content-length") ?? "0") > MAX_BODY_BYTES;
}

/** A GET or HEAD that declares a body (a Content-Length above 0, or a chunked body). */
function isBodyOnReadRequest(request: Request): boolean {
  if (request.method !== "GET" && request.method !== "HEAD") return false;
  const length = request.headers.get("content-length");
  return (length !== null && length.trim() !== "0") || request.headers.has("transfer-encoding");
}

/** The rate-limit key and budget of a request: per device, user or key when known, else per address. */
function rateLimitBucket(
  state: RequestState,
  path: string,
  limits: AppDeps["config"]["rate_limit"],
): [string, number] {
  // Sign-in and refresh are limited per address whatever token comes along, so attaching any valid
  // token cannot buy a password guesser the larger authenticated budget.
  if (PER_ADDRESS_PATHS.has(path)) return [`ip:${state.ip}`, limits.unauthenticated_per_minute];
  if (PROBE_PATHS.has(path)) return [`probe:${state.ip}`, limits.unauthenticated_per_minute];
  // The console's page and files: loading it must not use up the budget that guards sign-in.
  if (CONSOLE_PATHS.has(path) || path.startsWith("/console/"))
    return [`console:${state.ip}`, limits.unauthenticated_per_minute];
  if (state.device) return [`device:${state.device.deviceId}`, limits.authenticated_per_minute];
  const principal = state.principal;
  if (!principal) return [`ip:${state.ip}`, limits.unauthenticated_per_minute];
  const key = principal.apiKeyId ? `key:${principal.apiKeyId}` : `user:${principal.userId}`;
  return [
    key,
    principal.plan === "enterprise" ? limits.enterprise_per_minute : limits.authenticated_per_minute,
  ];
}

/**
 * Counts the request against one budget and sets the X-RateLimit-* headers; over the budget it throws
 * the 429 (with Retry-After, set by the error handler).
 */
async function countRequest(
  deps: AppDeps,
  state: RequestState,
  headers: Record<string, unknown>,
  [key, limit]: [string, number],
): Promise<void> {
  state.isCounted = true;
  const nowMs = deps.clock.now().getTime();
  const decision = await deps.rateLimiter.hit(key, limit, nowMs);
  headers["x-ratelimit-limit"] = String(decision.limit);
  headers["x-ratelimit-remaining"] = String(decision.remaining);
  headers["x-ratelimit-reset"] = String(decision.resetAt);
  if (!decision.isAllowed) {
    const retryAfter = Math.max(1, decision.resetAt - Math.floor(nowMs / 1000));
    throw new RateLimitedError(
      "rate_limited",
      "rate limit exceeded",
      retryAfter,
      `at most ${decision.limit} requests per minute; retry in ${retryAfter} seconds`,
    );
  }
}

/**
 * Counts a request that failed before its budget was known (an enrollment whose body could not be
 * read) against the per-address budget, so that every answer carries X-RateLimit-* and such failures
 * are limited too. Called by the error handler; it never throws.
 */
export async function countUncountedRequest(
  deps: AppDeps,
  request: Request,
  headers: Record<string, unknown>,
): Promise<void> {
  const state = states.get(request);
  if (!state || state.isCounted) return;
  try {
    await countRequest(deps, state, headers, [
      `ip:${state.ip}`,
      deps.config.rate_limit.unauthenticated_per_minute,
    ]);
  } catch {
    // Already answering an error: the count is what matters here.
  }
}

/**
 * Counts a request refused before routing (its URL could not be read) against its address's budget
 * and returns the response headers it carries: a request id and X-RateLimit-*.
 */
export async function headersForUnroutedRequest(deps: AppDeps, ip: string): Promise<Record<string, string>> {
  const headers: Record<string, unknown> = {
    "x-request-id": crypto.randomUUID(),
    "cache-control": "no-store",
  };
  const state = newRequestState(headers["x-request-id"] as string, ip, headers);
  try {
    await countRequest(deps, state, headers, [`ip:${ip}`, deps.config.rate_limit.unauthenticated_per_minute]);
  } catch (error) {
    if (error instanceof RateLimitedError) headers["retry-after"] = String(error.retryAfterSeconds);
  }
  return headers as Record<string, string>;
}

/**
 * The error a failed credential check leaves for the routes that need one. A storage failure answers
 * 503 on those routes; the request still gets its rate-limit headers, and routes without
 * authentication still work.
 */
function credentialError(deps: AppDeps, error: unknown, requestId: string): DomainError {
  if (error instanceof DomainError) return error;
  // Logged as a refusal by the route that needs the credentials, with what the driver said.
  const unavailable = databaseUnavailableError(error);
  if (unavailable) return unavailable;
  deps.log.error("authentication failed", { request_id: requestId, error });
  return new UnavailableError(
    "database_unavailable",
    "service unavailable",
    "credentials could not be checked",
  );
}

/**
 * Who may call a route: one scope; `authenticated`: any signed-in user or API key; `self`: the same, and a
 * session that must first set up MFA (its own profile, sign-out); `user`: a signed-in user, never an API
 * key, that session included (MFA management).
 */
export type Access = Scope | "authenticated" | "self" | "user";

/**
 * What every request goes through before routing: its request id, client address, credentials (checked,
 * the failure kept for the routes that need them), its count against a rate-limit budget (enrollment
 * waits for its body) and the header and declared-body size guards. Fills `headers` with X-Request-Id,
 * Cache-Control and X-RateLimit-*, so that every answer carries them; throws the 429, 431 or 413. Run
 * by the security plugin's onRequest and by the fast lane (fast-lane.ts), so both answer alike.
 */
export async function openRequest(
  deps: AppDeps,
  request: Request,
  socket: Peer | null | undefined,
  headers: Record<string, unknown>,
): Promise<RequestState> {
  const incoming = request.headers.get("x-request-id");
  const requestId = incoming && REQUEST_ID_PATTERN.test(incoming) ? incoming : crypto.randomUUID();
  const tlsClient = tlsClientOf(deps, socket);
  const peer = peerAddress(deps, socket);
  const isProxied = isTrustedProxy(deps.config.server, peer);
  const ip = clientAddress(deps, request, peer, isProxied);
  const state = newRequestState(requestId, ip, headers);
  states.set(request, state);
  headers["x-request-id"] = requestId;
  // Answers hold tokens, keys and personal data: no cache, shared or private, may keep them.
  headers["cache-control"] = "no-store";

  const isHeaderTooLarge = headerBytes(request) > MAX_HEADER_BYTES;
  const credential = isHeaderTooLarge ? null : presentedCredential(request);
  if (credential !== null) {
    try {
      if (credential === "")
        throw new UnauthenticatedError(
          "authorization_header_invalid",
          "invalid authorization header",
          "expected: Authorization: Bearer <token>",
        );
      if (credential.startsWith(DEVICE_TOKEN_PREFIX))
        state.device = await authenticateDeviceToken(deps, credential);
      else state.principal = await authenticateCredential(deps, credential);
    } catch (error) {
      state.authError = credentialError(deps, error, requestId);
    }
  } else if (!isHeaderTooLarge) {
    // No bearer credential: an agent may present its device certificate, in our TLS handshake or
    // (only from a trusted proxy's connection, and never when Bulwark terminates TLS itself: then the
    // handshake is the one source) in the proxy's Client-Cert header.
    try {
      const certificate = deps.tlsClients
        ? (tlsClient?.certificate ?? null)
        : isProxied
          ? parseClientCertHeader(request.headers.get("client-cert"))
          : null;
      if (certificate) state.device = await authenticateDeviceCertificate(deps, certificate);
    } catch (error) {
      state.authError = credentialError(deps, error, requestId);
    }
  }

  const path = requestPath(request);
  if (path !== ENROLL_PATH || isHeaderTooLarge)
    await countRequest(deps, state, headers, rateLimitBucket(state, path, deps.config.rate_limit));
  if (isHeaderTooLarge) {
    throw new HeadersTooLargeError(`the request headers may be at most ${MAX_HEADER_BYTES} bytes in all`);
  }
  if (isDeclaredBodyTooLarge(request)) {
    throw new BodyTooLargeError(`the body may be at most ${MAX_BODY_BYTES} bytes`);
  }
  if (isBodyOnReadRequest(request)) {
    // The server never sees it (Bun drops a GET's body): a `user_id` sent there would be ignored and
    // the request answered about someone else, the caller.
    throw new ValidationError("invalid request body", [
      {
        field: "body",
        message: "a GET or HEAD request takes no body: send its parameters in the query string",
      },
    ]);
  }
  return state;
}

/**
 * The principal of a request for a route that `required` guards, or the error to answer: the credential
 * check's own (401), a session that must set up MFA first, an API key on a user-only route or a
 * missing scope (403). The `access` macro and the fast lane both decide through it.
 */
export function requireAccess(state: RequestState, required: Access): { principal: Principal; actor: Actor } {
  if (!state.principal) throw state.authError ?? new UnauthenticatedError();
  const isSelfService = required === "self" || required === "user";
  if (state.principal.mfaSetupPending && !isSelfService)
    throw new ForbiddenError(
      "mfa_setup_required",
      "insufficient permissions",
      "multi-factor authentication must be set up first",
    );
  if (required === "user" && state.principal.kind === "api_key")
    throw new ForbiddenError(
      "api_key_not_allowed",
      "API keys cannot do this",
      "sign in as the user: multi-factor settings are never open to API keys",
    );
  if (!isSelfService && required !== "authenticated" && !hasScope(state.principal.scopes, required)) {
    throw new ForbiddenError(
      "scope_missing",
      "insufficient permissions",
      `this action needs the scope ${required}`,
    );
  }
  return { principal: state.principal, actor: actorOf(state.principal, state.ip) };
}

/**
 * The device of a request for an agent endpoint, or the error to answer: the credential check's own
 * (401), or device_token_required when none was presented. The `device` macro and the fast lane both
 * decide through it.
 */
export function requireDevice(
  state: RequestState,
  isRequired = true,
): { device: DevicePrincipal; actor: Actor } {
  if (!isRequired || !state.device) {
    throw (
      state.authError ??
      new UnauthenticatedError(
        "device_token_required",
        "invalid or missing authentication",
        "agent endpoints need a device token or a device certificate",
      )
    );
  }
  return {
    device: state.device,
    actor: {
      type: "device",
      id: state.device.deviceId,
      label: null,
      organizationId: state.device.organizationId,
      ip: state.ip,
    },
  };
}

/**
 * Request id, client address, authentication, rate limits and the body-size guard, all in onRequest so
 * that every response (errors and 429s included) carries X-Request-Id and X-RateLimit-*; plus the
 * `access` macro that routes use to declare who may call them.
 */
export function securityPlugin(deps: AppDeps) {
  return new Elysia({ name: "security" })
    .onRequest(async ({ request, set, server }) => {
      await openRequest(deps, request, requestPeer(request, server), set.headers);
    })
    .onTransform(async ({ request, body, set, route }) => {
      const state = states.get(request);
      if (!state) return;
      state.route = route;
      if (state.isCounted) return;
      // Enrollment: an imaging station enrolling a batch of laptops with one token gets the token's own
      // budget; bodies without a known token share the per-address budget that guards sign-in.
      const token = (body as { enrollment_token?: unknown } | undefined)?.enrollment_token;
      const tokenId =
        typeof token === "string" && token !== "" ? await findEnrollmentTokenId(deps.db, token) : null;
      await countRequest(
        deps,
        state,
        set.headers,
        tokenId
          ? [`enroll:${tokenId}`, deps.config.rate_limit.enrollments_per_minute]
          : [`ip:${state.ip}`, deps.config.rate_limit.unauthenticated_per_minute],
      );
    })
    .macro({
      /** Declares who may call the route; 401 without valid credentials, 403 naming the missing scope. */
      access: (required: Access) => ({
        // Published in the OpenAPI document, so clients (and the security matrix test) know who may call.
        detail: { "x-bulwark-access": required } as Record<string, unknown>,
        resolve({ request }): { principal: Principal; actor: Actor } {
          return requireAccess(requestState(request), required);
        },
      }),
      /** Agent endpoints: the caller must present a valid device token. */
      device: (isRequired: true) => ({
        detail: {
          "x-bulwark-access": "device",
          security: [{ deviceToken: [] }, { deviceCertificate: [] }],
        } as Record<string, unknown>,
        resolve({ request }): { device: DevicePrincipal; actor: Actor } {
          return requireDevice(requestState(request), isRequired);
        },
      }),
    })
    .as("global");
}
