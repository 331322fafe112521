import { Elysia } from "elysia";
import {
  DomainError,
  type DomainErrorKind,
  type FieldError,
  RateLimitedError,
  type Reason,
  ValidationError,
} from "../../domain/errors";
import { databaseUnavailableError } from "../../domain/system/check-database";
import type { Logger } from "../../lib/log";
import type { AppDeps } from "../app-deps";
import { requestPath } from "../request-path";
import { toFieldErrors } from "../validation-errors";
import { countUncountedRequest, requestStateIfAny } from "./security";

/** The one table from domain error kinds to HTTP statuses. */
const STATUS_BY_KIND: Record<DomainErrorKind, number> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  unsupported_media_type: 415,
  headers_too_large: 431,
  rate_limited: 429,
  unavailable: 503,
};

const INPUT_NAMES: Record<string, string> = {
  body: "invalid request body",
  query: "invalid query parameter",
  params: "invalid path parameter",
  headers: "invalid request header",
  cookie: "invalid cookie",
};

/** The error body (`Error` in the OpenAPI document): code, message, details, the stable `reason` and the request id. */
export interface ErrorBody {
  code: number;
  reason: Reason;
  message: string;
  details?: string;
  errors?: FieldError[];
  request_id?: string;
  /** Only on `POST /policies/validate`'s 400, which answers the shape of its 200. */
  valid?: false;
}

const JSON_HEADERS = { "content-type": "application/json; charset=utf-8" };
/** Fields whose value is never echoed back in `received`: an error body may end up in logs. */
const SECRET_FIELD = /(password|secret|token|key)$/i;
const MAX_ECHO_CHARACTERS = 200;
const URL_CREDENTIALS = /(\/\/)[^/@\s]*@/g;
const MAX_DETAILS_CHARACTERS = 500;

/** `received` as it may be shown: omitted for secrets, cut to 200 characters (non-strings as JSON text). */
function echoable(error: FieldError): FieldError {
  const lastSegment = error.field.split(".").at(-1) ?? "";
  const { received, ...rest } = error;
  if (received === undefined || SECRET_FIELD.test(lastSegment)) return rest;
  const shown = typeof received === "string" ? received : (JSON.stringify(received) ?? String(received));
  // A URL's user:password@ (a webhook target refused for carrying credentials) is not echoed either.
  const text = shown.replace(URL_CREDENTIALS, "$1***@");
  if (text.length <= MAX_ECHO_CHARACTERS) return text === shown ? error : { ...rest, received: text };
  return { ...rest, received: `${text.slice(0, MAX_ECHO_CHARACTERS)}…` };
}

/** A failure described for the one body: status, reason, message and what else the answer says. */
interface Described {
  status: number;
  reason: Reason;
  message: string;
  details?: string;
  errors?: FieldError[];
  headers?: Record<string, string>;
  isPolicyValidation?: boolean;
}

/** The only place an error response is made. */
function errorResponse(described: Described, headers: Record<string, string>, requestId?: string): Response {
  const body: ErrorBody = { code: described.status, reason: described.reason, message: described.message };
  if (described.details)
    body.details =
      described.details.length > MAX_DETAILS_CHARACTERS
        ? `${described.details.slice(0, MAX_DETAILS_CHARACTERS)}…`
        : described.details;
  if (described.isPolicyValidation) body.valid = false;
  if (described.errors && described.errors.length > 0) body.errors = described.errors.map(echoable);
  // Every error can be found in the logs by its id, also one refused before a request id was given.
  const id = requestId ?? crypto.randomUUID();
  body.request_id = id;
  return new Response(JSON.stringify(body), {
    status: described.status,
    headers: { "x-request-id": id, ...headers, ...described.headers, ...JSON_HEADERS },
  });
}

/**
 * The answer to a failure outside Elysia's handling (see http-server.ts): the 500 body with the
 * request id and rate-limit headers the request had gathered, if it got that far.
 */
export function unhandledErrorResponse(log: Logger, request: Request | null, error: unknown): Response {
  const state = request ? requestStateIfAny(request) : undefined;
  const unavailable = databaseUnavailableError(error);
  if (unavailable) {
    logRefusal(log, state?.requestId, unavailable);
    return errorResponse(
      describeDomainError(unavailable),
      (state?.responseHeaders ?? {}) as Record<string, string>,
      state?.requestId,
    );
  }
  log.error("unhandled error", {
    request_id: state?.requestId,
    method: request?.method,
    path: request ? requestPath(request) : undefined,
    error,
  });
  return errorResponse(
    INTERNAL_ERROR,
    (state?.responseHeaders ?? {}) as Record<string, string>,
    state?.requestId,
  );
}

const INTERNAL_ERROR: Described = { status: 500, reason: "internal_error", message: "internal server error" };

/** A refusal whose answer leaves out what the log says (what a host or the database driver said). */
function logRefusal(log: Logger, requestId: string | undefined, error: DomainError): void {
  log.warn("request refused", { request_id: requestId, reason: error.reason, detail: error.logDetail });
}

/**
 * The answer to what a request's own work threw (a route's domain function, the security checks): a
 * DomainError as its kind says, anything else the logged 500. Headers are the request's gathered ones.
 * Elysia's onError below and the fast lane (fast-lane.ts) both answer through it.
 */
export function requestErrorResponse(
  deps: AppDeps,
  request: Request,
  error: unknown,
  headers: Record<string, string>,
): Response {
  const requestId = requestStateIfAny(request)?.requestId;
  const typed = error instanceof DomainError ? error : databaseUnavailableError(error);
  if (typed) {
    if (typed.logDetail) logRefusal(deps.log, requestId, typed);
    return errorResponse(describeDomainError(typed), headers, requestId);
  }
  deps.log.error("unhandled error", {
    request_id: requestId,
    method: request.method,
    path: requestPath(request),
    error,
  });
  return errorResponse(INTERNAL_ERROR, headers, requestId);
}

/**
 * A request whose URL cannot be read (a malformed Host header, a CONNECT target): refused before
 * routing, with the request id and rate-limit headers `headers` holds.
 */
export function invalidHostResponse(headers: Record<string, string>): Response {
  return errorResponse(
    {
      status: 400,
      reason: "invalid_host",
      message: "invalid request",
      details: "the Host header (or the request target) is not a valid host",
    },
    headers,
    headers["x-request-id"],
  );
}

/** Route patterns by method, used to tell 405 (path exists, other method) from 404. */
export type RouteTable = { method: string; path: string; pattern: RegExp }[];

const routeTables = new WeakMap<object, RouteTable>();

/** The route table of a built app, made once on first use (the error handler's 405s, the request log). */
export function routeTableOf(app: { routes: { method: string; path: string }[] }): RouteTable {
  let table = routeTables.get(app);
  if (!table) {
    table = buildRouteTable(app.routes);
    routeTables.set(app, table);
  }
  return table;
}

function buildRouteTable(routes: { method: string; path: string }[]): RouteTable {
  return routes.map((route) => ({
    method: route.method.toUpperCase(),
    path: route.path,
    pattern: new RegExp(
      `^${route.path
        .replace(/[.+?^${}()|[\]\\]/g, "\\$&")
        .replace(/:[^/]+/g, "[^/]+")
        .replace(/\*/g, ".*")}/?$`,
    ),
  }));
}

/** A typed error as the body says it: its kind's status, its reason, message, details and field errors. */
function describeDomainError(error: DomainError): Described {
  return {
    status: STATUS_BY_KIND[error.kind],
    reason: error.reason,
    message: error.message,
    details: error.details,
    errors: error instanceof ValidationError ? error.errors : undefined,
    headers:
      error instanceof RateLimitedError ? { "retry-after": String(error.retryAfterSeconds) } : undefined,
    isPolicyValidation: error instanceof PolicyDocumentInvalidError,
  };
}

/** `POST /policies/validate` refusing a document: its 400 also says `valid: false`. */
export class PolicyDocumentInvalidError extends ValidationError {
  constructor(errors: FieldError[]) {
    super("invalid policy", errors, undefined, "policy_invalid");
  }
}

/** What Elysia itself raised (validation, parsing, routing), described for the one body. */
function describeFrameworkError(
  code: unknown,
  error: unknown,
  request: Request,
  routeTable: RouteTable,
): Described | null {
  if (code === "VALIDATION") {
    const validation = error as { type: string; all: Parameters<typeof toFieldErrors>[0] };
    if (validation.type === "response") return null;
    const errors = toFieldErrors(validation.all, "");
    return {
      status: 400,
      reason: "validation_failed",
      message: INPUT_NAMES[validation.type] ?? "invalid request",
      details: errors.map((entry) => `${entry.field}: ${entry.message}`).join("; "),
      errors,
    };
  }
  if (code === "PARSE")
    return {
      status: 400,
      reason: "invalid_json",
      message: "invalid request body",
      details: "the body is not valid JSON",
    };
  if (code === "NOT_FOUND") {
    const path = requestPath(request);
    const allowed = [
      ...new Set(routeTable.filter((route) => route.pattern.test(path)).map((route) => route.method)),
    ];
    if (allowed.length > 0 && !allowed.includes(request.method.toUpperCase())) {
      return {
        status: 405,
        reason: "method_not_allowed",
        message: "method not allowed",
        details: `${request.method} is not supported here; allowed: ${allowed.join(", ")}`,
        headers: { allow: allowed.join(", ") },
      };
    }
    return {
      status: 404,
      reason: "route_not_found",
      message: "not found",
      details: `no route for ${request.method} ${path}`,
    };
  }
  if (code === "INVALID_COOKIE_SIGNATURE")
    return { status: 400, reason: "invalid_cookie", message: "invalid cookie" };
  return null;
}

/**
 * Maps every failure to the one error body with a stable `reason`: typed errors by kind, Elysia's
 * validation (422) to 400 with each field named, malformed JSON to 400, unknown routes to 404, known
 * paths with the wrong method to 405. Anything else is logged and answered with a 500 that carries no
 * stack trace. Nothing else in the code builds an error response.
 */
export function errorHandlerPlugin(deps: AppDeps, routeTable: () => RouteTable) {
  return new Elysia({ name: "error-handler" })
    .onError(async ({ code, error: thrown, request, set }) => {
      await countUncountedRequest(deps, request, set.headers);
      // Elysia wraps whatever a body parser throws in a ParseError; ours throws typed errors.
      const error =
        code === "PARSE" && (thrown as Error).cause instanceof Error
          ? ((thrown as Error).cause as Error)
          : thrown;
      const headers = { ...(set.headers as Record<string, string>) };
      if (error instanceof DomainError) return requestErrorResponse(deps, request, error, headers);
      const requestId = requestStateIfAny(request)?.requestId;
      const described = describeFrameworkError(code, error, request, routeTable());
      if (described) return errorResponse(described, headers, requestId);
      if (code === "VALIDATION") {
        deps.log.error("response did not match its schema", {
          request_id: requestId,
          method: request.method,
          path: requestPath(request),
          errors: (error as { all?: unknown }).all,
        });
        return errorResponse(INTERNAL_ERROR, headers, requestId);
      }
      return requestErrorResponse(deps, request, error, headers);
    })
    .as("global");
}
