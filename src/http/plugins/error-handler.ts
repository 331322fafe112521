import { Elysia } from "elysia";
import { DomainError, type DomainErrorKind, RateLimitedError, ValidationError } from "../../domain/errors";
import type { AppDeps } from "../app-deps";
import { errorResponse, HttpError } from "../error-body";
import { toFieldErrors } from "../validation-errors";
import { countUncountedRequest, requestState } from "./security";

/** The one table from domain error kinds to HTTP statuses. */
const STATUS_BY_KIND: Record<DomainErrorKind, number> = {
  invalid: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
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

/** Route patterns by method, used to tell 405 (path exists, other method) from 404. */
export type RouteTable = { method: string; pattern: RegExp }[];

export function buildRouteTable(routes: { method: string; path: string }[]): RouteTable {
  return routes.map((route) => ({
    method: route.method.toUpperCase(),
    pattern: new RegExp(
      `^${route.path
        .replace(/[.+?^${}()|[\]\\]/g, "\\$&")
        .replace(/:[^/]+/g, "[^/]+")
        .replace(/\*/g, ".*")}/?$`,
    ),
  }));
}

/**
 * Maps every failure to SPEC.md's error body: domain errors by kind, Elysia's validation (422) to 400
 * with each field named, malformed JSON to 400, unknown routes to 404, known paths with the wrong method
 * to 405. Anything else is logged and answered with a 500 that carries no stack trace.
 */
export function errorHandlerPlugin(deps: AppDeps, routeTable: () => RouteTable) {
  return new Elysia({ name: "error-handler" })
    .onError(({ code, error: thrown, request, set }) => {
      countUncountedRequest(deps, request, set.headers);
      // Elysia wraps whatever a body parser throws in a ParseError; ours throws typed errors.
      const error =
        code === "PARSE" && (thrown as Error).cause instanceof Error
          ? ((thrown as Error).cause as Error)
          : thrown;
      const headers = { ...(set.headers as Record<string, string>) };
      let requestId: string | undefined;
      try {
        requestId = requestState(request).requestId;
      } catch {
        requestId = undefined;
      }
      if (error instanceof ValidationError) {
        return errorResponse(400, error.message, {
          details: error.details,
          errors: error.errors,
          headers,
          requestId,
        });
      }
      if (error instanceof RateLimitedError) {
        return errorResponse(429, error.message, {
          details: error.details,
          headers: { ...headers, "retry-after": String(error.retryAfterSeconds) },
          requestId,
        });
      }
      if (error instanceof HttpError) {
        return errorResponse(error.status, error.message, { details: error.details, headers, requestId });
      }
      if (error instanceof DomainError) {
        return errorResponse(STATUS_BY_KIND[error.kind], error.message, {
          details: error.details,
          headers,
          requestId,
        });
      }
      if (code === "VALIDATION") {
        const validation = error as unknown as { type: string; all: Parameters<typeof toFieldErrors>[0] };
        if (validation.type === "response") {
          console.error(`[${requestId}] response did not match its schema`, validation.all);
          return errorResponse(500, "internal server error", { headers, requestId });
        }
        const errors = toFieldErrors(validation.all, "");
        const message = INPUT_NAMES[validation.type] ?? "invalid request";
        return errorResponse(400, message, {
          details: errors.map((entry) => `${entry.field}: ${entry.message}`).join("; "),
          errors,
          headers,
          requestId,
        });
      }
      if (code === "PARSE") {
        return errorResponse(400, "invalid request body", {
          details: "the body is not valid JSON",
          headers,
          requestId,
        });
      }
      if (code === "NOT_FOUND") {
        const path = new URL(request.url).pathname;
        const allowed = [
          ...new Set(
            routeTable()
              .filter((route) => route.pattern.test(path))
              .map((route) => route.method),
          ),
        ];
        if (allowed.length > 0 && !allowed.includes(request.method.toUpperCase())) {
          return errorResponse(405, "method not allowed", {
            details: `${request.method} is not supported here; allowed: ${allowed.join(", ")}`,
            headers: { ...headers, allow: allowed.join(", ") },
            requestId,
          });
        }
        return errorResponse(404, "not found", {
          details: `no route for ${request.method} ${path}`,
          headers,
          requestId,
        });
      }
      if (code === "INVALID_COOKIE_SIGNATURE")
        return errorResponse(400, "invalid cookie", { headers, requestId });
      console.error(`[${requestId}] unhandled error on ${request.method} ${request.url}:`, error);
      return errorResponse(500, "internal server error", { headers, requestId });
    })
    .as("global");
}
