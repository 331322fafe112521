import type { AnyElysia } from "elysia";
import { getDevice } from "../domain/devices/get-device";
import type { AppDeps } from "./app-deps";
import { requestErrorResponse } from "./plugins/error-handler";
import { countUncountedRequest, openRequest, requireAccess } from "./plugins/security";
import { requestPeer } from "./request-path";

/** The template the fast lane answers, as Elysia names it in logs and metrics. */
export const FAST_DEVICE_ROUTE = "/api/v1/devices/:id";

/** `/api/v1/devices/<uuid>`, nothing more: any other shape (a query, an escape, a slash) goes to Elysia. */
const DEVICE_PATH =
  /^\/api\/v1\/devices\/[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/;
const DEVICE_PATH_START = "/api/v1/devices/".length;

/** What Elysia sends with an object it turns into JSON. */
const JSON_CONTENT_TYPE = "application/json;charset=utf-8";

/**
 * `GET /api/v1/devices/:id`, the read dashboards and scripts make most, answered without Elysia's
 * pipeline, which cost ~4x the read itself (hook chain, context, header merge, response validation).
 * It runs the same steps through the same functions as the Elysia route: openRequest (request id,
 * credentials, rate limit, size guards), requireAccess (the `access` macro's decision), getDevice, and
 * requestErrorResponse for every failure; the route stays in Elysia for the OpenAPI document and for
 * any request this does not take. Returns null for a request that is not exactly this route's shape
 * (another method, a query string, a path that is not a UUID): Elysia answers those.
 */
export function fastLane(app: AnyElysia, deps: AppDeps): (request: Request) => Promise<Response> | null {
  return (request) => {
    if (request.method !== "GET") return null;
    const url = request.url;
    // The path as requestPath reads it; normalizeRequestHost (http-server.ts) guarantees that reading.
    const start = url.indexOf("/", 11);
    if (start === -1 || url.indexOf("?", start) !== -1) return null;
    const path = url.substring(start);
    if (!DEVICE_PATH.test(path)) return null;
    return answerDeviceRead(app, deps, request, path.substring(DEVICE_PATH_START));
  };
}

async function answerDeviceRead(
  app: AnyElysia,
  deps: AppDeps,
  request: Request,
  deviceId: string,
): Promise<Response> {
  const headers: Record<string, string> = {};
  try {
    const state = await openRequest(
      deps,
      request,
      requestPeer(request) ?? app.server?.requestIP(request),
      headers,
    );
    state.route = FAST_DEVICE_ROUTE;
    const { principal } = requireAccess(state, "devices:read");
    const view = getDevice(deps, principal.organizationId, deviceId);
    headers["content-type"] = JSON_CONTENT_TYPE;
    return new Response(JSON.stringify(view), { headers });
  } catch (error) {
    countUncountedRequest(deps, request, headers);
    return requestErrorResponse(deps, request, error, headers);
  }
}
