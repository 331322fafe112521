import type { Server } from "bun";
import type { AnyElysia } from "elysia";
import { isIP } from "../lib/ip-version";
import type { AppDeps } from "./app-deps";
import { observeRequests, recordRequest, UNMATCHED_ROUTE } from "./observe-requests";
import { invalidHostResponse, unhandledErrorResponse } from "./plugins/error-handler";
import { headersForUnroutedRequest, MAX_BODY_BYTES } from "./plugins/security";
import { normalizeRequestHost, rememberPeer } from "./request-path";

/** Raised when the server cannot listen; the message names the address and the cause in one line. */
export class ListenError extends Error {}

const LISTEN_CAUSES: Record<string, string> = {
  EADDRINUSE: "the port is in use by another program",
  EACCES: "permission denied (ports below 1024 need privileges)",
  EADDRNOTAVAIL: "the address is not one of this machine's",
  EINVAL: "not a valid listen address",
  ENOTFOUND: "the host name does not resolve",
  ENOENT: "the host name does not resolve",
};

/**
 * Listens with Bun.serve in production mode around the app's fetch. Elysia's own `listen` would serve
 * Bun's development error page (our stack and source) when something throws outside a handler; here
 * any such failure still answers the JSON error body with the request id and rate-limit headers
 * the request had gathered.
 */
export function listenHttp(
  app: AnyElysia,
  deps: AppDeps,
  options: { hostname: string; port: number },
): Server<undefined> {
  let server: Server<undefined>;
  const handle = observeRequests(app, deps);
  try {
    server = Bun.serve({
      hostname: options.hostname,
      port: options.port,
      // A second server on the same port must fail, not silently share the traffic.
      reusePort: false,
      development: false,
      idleTimeout: 30,
      // Far above MAX_BODY_BYTES: the body reader measures bodies itself and answers the JSON 413
      // before Bun's own cap (which closes the connection without a body) could be reached.
      maxRequestBodySize: MAX_BODY_BYTES * 64,
      fetch: async (request, bunServer) => {
        const routable = normalizeRequestHost(request);
        if (!routable) {
          const startedAt = performance.now();
          const ip = bunServer.requestIP(request)?.address ?? "127.0.0.1";
          const response = invalidHostResponse(await headersForUnroutedRequest(deps, ip));
          recordRequest(deps, {
            method: request.method,
            route: UNMATCHED_ROUTE,
            path: "",
            status: response.status,
            startedAt,
            requestId: response.headers.get("x-request-id"),
            principal: null,
            ip,
          });
          return response;
        }
        // Bun answers requestIP only for the request it made; the copy normalizeRequestHost may make
        // carries the peer here (the client address, and the TLS front's connection).
        rememberPeer(routable, bunServer.requestIP(request));
        return handle(routable);
      },
      error: (error) => unhandledErrorResponse(deps.log, null, error),
    });
  } catch (error) {
    throw listenError(error, options.hostname, options.port);
  }
  // Route handlers read the client address through app.server.
  app.server = server;
  return server;
}

/** The ListenError for a failure to listen on hostname:port, naming the cause in one line. */
export function listenError(error: unknown, hostname: string, port: number): ListenError {
  const code = (error as { code?: string }).code ?? "";
  const address = `${hostname.includes(":") ? `[${hostname}]` : hostname}:${port}`;
  const cause = LISTEN_CAUSES[code] ?? (error as Error).message.split("\n")[0];
  return new ListenError(`cannot listen on ${address}: ${cause}`);
}

/**
 * A listen address that is a host name must resolve: Bun reports an unresolvable one as "address in
 * use", which would send an operator looking for another program on the port.
 */
export async function assertHostResolves(hostname: string): Promise<void> {
  if (isIP(hostname) !== 0) return;
  try {
    await process.getBuiltinModule("node:dns/promises").lookup(hostname);
  } catch {
    throw new ListenError(`cannot listen on ${hostname}: the host name does not resolve`);
  }
}
