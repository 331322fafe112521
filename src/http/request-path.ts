import type { TlsClient } from "./tls-front";

/**
 * The path of a request as Elysia's router reads it: from the first "/" at or after index 11 of the URL
 * (past "http://" and at least four characters of host) up to the query. The security plugin and the
 * error handler use the same reading, so a rate-limit bucket or a 405 is always about the route that
 * answers; `normalizeRequestHost` (http-server.ts) makes sure every request's URL fits that reading.
 */
export function requestPath(request: Request): string {
  const url = request.url;
  const start = url.indexOf("/", 11);
  if (start === -1) return "/";
  const query = url.indexOf("?", start);
  return query === -1 ? url.substring(start) : url.substring(start, query);
}

/** A request's socket address; `tls`, when present, is its TLS front record as looked up earlier (pinPeer). */
export interface Peer {
  address: string;
  port: number;
  tls?: TlsClient | undefined;
}

/** The socket peer of each request the server handed to the app, kept across normalizeRequestHost's copy. */
const peers = new WeakMap<Request, Peer | null>();

/** Records the socket peer (from the original request) for the request the app will see. */
export function rememberPeer(request: Request, peer: Peer | null): void {
  peers.set(request, peer);
}

/**
 * The socket peer of a request: the one listenHttp recorded, else the one `server` knows (Bun answers
 * only for a request it made itself), else undefined (in-process requests, tests).
 */
export function requestPeer(
  request: Request,
  server?: { requestIP(request: Request): { address: string; port: number } | null } | null,
): Peer | null | undefined {
  return peers.get(request) ?? server?.requestIP(request);
}

/**
 * The request as the router can read it, or null when its URL cannot be read at all (a malformed Host
 * header, a CONNECT target). Bun builds the URL from the Host header; a host shorter than four
 * characters would make the router read the path from the wrong "/", so such a request is re-addressed
 * to `localhost` with the same method, headers, path and body.
 */
export function normalizeRequestHost(request: Request): Request | null {
  const url = request.url;
  const schemeEnd = url.indexOf("://");
  if (schemeEnd === -1 || !URL.canParse(url)) return null;
  const pathStart = url.indexOf("/", schemeEnd + 3);
  if (pathStart === -1) return null;
  if (pathStart >= 11) return request;
  return new Request(`http://localhost${url.substring(pathStart)}`, request);
}
