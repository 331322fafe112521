import type { Config } from "../config/config-schema";

/** Headers a page on an allowed origin may send, and the ones it may read from an answer. */
const ALLOWED_HEADERS = "Authorization, Content-Type, X-API-Key, X-Request-Id";
const EXPOSED_HEADERS =
  "X-Request-Id, X-RateLimit-Limit, X-RateLimit-Remaining, X-RateLimit-Reset, Retry-After, Content-Disposition";
const ALLOWED_METHODS = "GET, POST, PUT, PATCH, DELETE";
/** How long a browser may keep a preflight's answer. */
const PREFLIGHT_MAX_AGE_SECONDS = 600;

/** The request's Origin when `server.cors_origins` lists it, else null. */
function allowedOrigin(config: Readonly<Config>, request: Request): string | null {
  const origin = request.headers.get("origin");
  if (!origin || config.server.cors_origins.length === 0) return null;
  return config.server.cors_origins.some((allowed) => allowed.replace(/\/$/, "") === origin) ? origin : null;
}

/**
 * The answer to a CORS preflight (OPTIONS with Access-Control-Request-Method) from an allowed origin,
 * or null to let the request through (a preflight from any other origin then gets no CORS headers, and
 * the browser refuses the call). Credentials travel as bearer tokens, never cookies, so no
 * Access-Control-Allow-Credentials.
 */
export function corsPreflight(config: Readonly<Config>, request: Request): Response | null {
  if (request.method !== "OPTIONS" || !request.headers.has("access-control-request-method")) return null;
  const origin = allowedOrigin(config, request);
  if (!origin) return null;
  return new Response(null, {
    status: 204,
    headers: {
      "access-control-allow-origin": origin,
      "access-control-allow-methods": ALLOWED_METHODS,
      "access-control-allow-headers": ALLOWED_HEADERS,
      "access-control-max-age": String(PREFLIGHT_MAX_AGE_SECONDS),
      vary: "Origin",
    },
  });
}

/**
 * Adds the CORS headers an allowed origin's page needs to read `response`; every answer says it varies
 * by Origin, so a cache never hands one origin's answer to another.
 */
export function addCorsHeaders(config: Readonly<Config>, request: Request, response: Response): Response {
  const origin = allowedOrigin(config, request);
  response.headers.append("vary", "Origin");
  if (origin) {
    response.headers.set("access-control-allow-origin", origin);
    response.headers.set("access-control-expose-headers", EXPOSED_HEADERS);
  }
  return response;
}
