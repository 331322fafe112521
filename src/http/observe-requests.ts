import type { AnyElysia } from "elysia";
import type { AppDeps } from "./app-deps";
import { addCorsHeaders, corsPreflight } from "./cors";
import { fastLane } from "./fast-lane";
import { routeTableOf, unhandledErrorResponse } from "./plugins/error-handler";
import { type RequestState, requestStateIfAny } from "./plugins/security";
import { requestPath } from "./request-path";

/** The route label of requests no route answers: raw paths would make one series per probe. */
export const UNMATCHED_ROUTE = "unmatched";

const MAX_LOGGED_PATH = 200;

/** Answered during the start too (503 `starting`), so that a probe can tell when the server is ready. */
const HEALTH_PATH = "/api/v1/health";

/** Methods labelled as themselves; any other is `other`, so made-up methods add no series. */
const KNOWN_METHODS = new Set(["GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"]);

/** Who made a request, as logged: `user:<id>`, `api_key:<id>`, `device:<id>`, or null. */
function principalOf(state: RequestState | undefined): string | null {
  if (state?.device) return `device:${state.device.deviceId}`;
  const principal = state?.principal;
  if (!principal) return null;
  return principal.apiKeyId ? `api_key:${principal.apiKeyId}` : `user:${principal.userId}`;
}

/** One answered request, for the log line and the metrics. */
export interface AnsweredRequest {
  method: string;
  route: string;
  path: string;
  status: number;
  startedAt: number;
  requestId: string | null;
  principal: string | null;
  ip: string | null;
}

/** Counts the request in the metrics and writes its log line (warn for 5xx). */
export function recordRequest(deps: AppDeps, answered: AnsweredRequest): void {
  const seconds = (performance.now() - answered.startedAt) / 1000;
  const method = KNOWN_METHODS.has(answered.method) ? answered.method : "other";
  deps.metrics.observeRequest(method, answered.route, answered.status, seconds);
  const level = answered.status >= 500 ? "warn" : "info";
  if (!deps.log.isEnabled(level)) return;
  deps.log[level]("request", {
    method: answered.method,
    route: answered.route,
    // A path can be as long as the request line allows; the log keeps its start.
    path:
      answered.path.length > MAX_LOGGED_PATH ? `${answered.path.slice(0, MAX_LOGGED_PATH)}…` : answered.path,
    status: answered.status,
    duration_ms: Math.round(seconds * 1e5) / 100,
    request_id: answered.requestId,
    principal: answered.principal,
    ip: answered.ip,
  });
}

/**
 * The app's request handler with a log line and metrics for every answer, errors included: the one
 * entry point of the HTTP server and of in-process tests. The route is the template the router matched
 * (recorded by the security plugin), or, for a request refused before routing (a 429, an oversized
 * header), the template its path fits.
 */
export function observeRequests(app: AnyElysia, deps: AppDeps): (request: Request) => Promise<Response> {
  const templateOf = (method: string, path: string): string => {
    const fitting = routeTableOf(app).filter((route) => route.pattern.test(path));
    return (fitting.find((route) => route.method === method) ?? fitting[0])?.path ?? UNMATCHED_ROUTE;
  };
  const fast = fastLane(app, deps);
  return async (request) => {
    const startedAt = performance.now();
    // While `serve` finishes its start, requests wait for it; the health check answers at once.
    const started = deps.activity.started();
    if (started && requestPath(request) !== HEALTH_PATH) await started;
    let response: Response;
    const preflight = corsPreflight(deps.config, request);
    try {
      response = preflight ?? (await (fast(request) ?? app.handle(request)));
    } catch (error) {
      response = unhandledErrorResponse(deps.log, request, error);
    }
    if (!preflight && deps.config.server.cors_origins.length > 0)
      response = addCorsHeaders(deps.config, request, response);
    const state = requestStateIfAny(request);
    const path = requestPath(request);
    // A 404 from the router keeps the unmatched label even when a wildcard route exists.
    const route =
      state?.route ?? (response.status === 404 ? UNMATCHED_ROUTE : templateOf(request.method, path));
    recordRequest(deps, {
      method: request.method,
      route,
      path,
      status: response.status,
      startedAt,
      requestId: state?.requestId ?? response.headers.get("x-request-id"),
      principal: principalOf(state),
      ip: state?.ip ?? null,
    });
    return response;
  };
}
