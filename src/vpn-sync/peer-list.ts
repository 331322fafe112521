/**
 * The VPN server's peer list as `bulwark vpn sync` reads it: GET /api/v1/vpn/peers with an API key that
 * has the vpn:read scope, once per key (one key per organization whose devices use this server), with
 * If-None-Match so that an unchanged list is a 304 without a body.
 */
import { isWireGuardKey } from "../lib/wireguard";
import { VERSION } from "../version";

/** One peer the interface must hold. */
export interface Peer {
  publicKey: string;
  allowedIps: string[];
  /** The device's name and id, for the log. */
  label: string;
}

/** What one key's list says. */
export interface PeerList {
  version: string;
  serverPublicKey: string;
  peers: Peer[];
}

/** The server could not be reached, or did not answer as a Bulwark server: try again later. */
export class ServerUnreachable extends Error {}

/** The server answered with a refusal (a revoked key, a missing scope, a rate limit). */
export class ServerRefusal extends Error {
  constructor(
    message: string,
    readonly status: number,
    /** The server's Retry-After, in seconds (429, 503). */
    readonly retryAfterSeconds: number | null,
  ) {
    super(message);
  }
}

/** How long one request may take before the server counts as away. */
const REQUEST_TIMEOUT_MS = 30_000;

/** An IPv4 or IPv6 network in CIDR notation, as the list's allowed_ips hold them. */
const CIDR = /^(?:\d{1,3}(?:\.\d{1,3}){3}\/\d{1,2}|[0-9A-Fa-f:.]+\/\d{1,3})$/;

/** A failed request as one line: the cause, with what to do for the common ones. */
function describeFailure(url: URL, error: unknown): string {
  const { code, name, message } = error as { code?: unknown; name?: unknown; message?: unknown };
  const original = String(message ?? error).split("\n")[0] ?? "";
  const port = url.port || (url.protocol === "https:" ? "443" : "80");
  if (code === "ECONNREFUSED") return `nothing listens at ${url.hostname}:${port} (${original})`;
  if (name === "TimeoutError")
    return `no answer from ${url.hostname}:${port} within ${REQUEST_TIMEOUT_MS / 1000} s`;
  if (/certificate|self[- ]signed|unable to verify/i.test(`${String(code)} ${original}`))
    return `the server's TLS certificate is not trusted: pass --ca-file with the CA that signed it (${original})`;
  return original;
}

/** Retry-After in seconds (a number of seconds or an HTTP date), or null. */
function retryAfterOf(header: string | null): number | null {
  if (header === null) return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, (at - Date.now()) / 1000);
}

/** The answer's list, checked: anything but the shape this client acts on is refused, unapplied. */
function peerListOf(body: unknown): PeerList {
  const answer = body as {
    version?: unknown;
    server_public_key?: unknown;
    peers?: { public_key?: unknown; allowed_ips?: unknown; device_name?: unknown; device_id?: unknown }[];
  };
  if (
    typeof answer !== "object" ||
    answer === null ||
    typeof answer.version !== "string" ||
    typeof answer.server_public_key !== "string" ||
    !Array.isArray(answer.peers)
  )
    throw new ServerUnreachable("the answer is not a Bulwark peer list: is --server the right URL?");
  const peers = answer.peers.map((peer): Peer => {
    const allowedIps = peer.allowed_ips;
    if (
      typeof peer.public_key !== "string" ||
      !isWireGuardKey(peer.public_key) ||
      !Array.isArray(allowedIps) ||
      !allowedIps.every((network) => typeof network === "string" && CIDR.test(network))
    )
      throw new ServerUnreachable(
        `the peer list holds a peer this client cannot apply: ${JSON.stringify(peer)}`,
      );
    return {
      publicKey: peer.public_key,
      allowedIps: allowedIps as string[],
      label: `${String(peer.device_name ?? "?")} (${String(peer.device_id ?? "?")})`,
    };
  });
  return { version: answer.version, serverPublicKey: answer.server_public_key, peers };
}

/**
 * One request to the server with `apiKey`, within REQUEST_TIMEOUT_MS (or until `stop`), trusting `ca`
 * when given: the answer, whatever its status; ServerUnreachable when none came.
 */
async function callServer(
  url: URL,
  apiKey: string,
  init: { method?: string; headers?: Record<string, string>; body?: string },
  ca: string | null,
  stop: AbortSignal | undefined,
): Promise<Response> {
  try {
    return await fetch(url, {
      method: init.method ?? "GET",
      headers: {
        accept: "application/json",
        authorization: `Bearer ${apiKey}`,
        "user-agent": `bulwark-vpn-sync/${VERSION}`,
        ...init.headers,
      },
      body: init.body,
      signal: stop
        ? AbortSignal.any([AbortSignal.timeout(REQUEST_TIMEOUT_MS), stop])
        : AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      ...(ca ? { tls: { ca } } : {}),
    } as RequestInit);
  } catch (error) {
    throw new ServerUnreachable(`${url.origin}: ${describeFailure(url, error)}`);
  }
}

/**
 * The error for an answer that is not a success, `body` its parsed JSON (or null): the server's
 * reason and details, then `hint`. A server that is starting, overloaded or behind a proxy whose
 * upstream is down is away (ServerUnreachable), not refusing.
 */
function refusalOf(
  url: URL,
  response: Response,
  body: unknown,
  what: string,
  hint: string,
): ServerUnreachable | ServerRefusal {
  const refusal = body as { reason?: unknown; details?: unknown; message?: unknown } | null;
  const reason = typeof refusal?.reason === "string" ? refusal.reason : `http_${response.status}`;
  const details = typeof refusal?.details === "string" ? refusal.details : refusal?.message;
  const message = `${url.origin} refused${what}: ${reason}${typeof details === "string" ? ` (${details})` : ""}${hint}`;
  if (response.status >= 500 && response.status !== 501) return new ServerUnreachable(message);
  return new ServerRefusal(message, response.status, retryAfterOf(response.headers.get("retry-after")));
}

/**
 * One key's peer list from `server` (its base URL), or `previous` unchanged when the server says it
 * still holds (304 to If-None-Match). `ca` is a PEM that verifies the server's TLS certificate when the
 * system's store does not. Throws ServerUnreachable (no answer, or not a Bulwark one) or ServerRefusal.
 */
export async function fetchPeerList(
  server: string,
  apiKey: string,
  previous: PeerList | null,
  ca: string | null,
  /** Ends a request in flight (the sync is stopping). */
  stop?: AbortSignal,
): Promise<PeerList> {
  const url = new URL(`${server}/api/v1/vpn/peers`);
  const headers: Record<string, string> = previous ? { "if-none-match": `"${previous.version}"` } : {};
  const response = await callServer(url, apiKey, { headers }, ca, stop);
  if (response.status === 304 && previous) return previous;
  const text = await response.text().catch(() => "");
  let body: unknown = null;
  try {
    body = JSON.parse(text);
  } catch {
    // Not JSON: a proxy's page, or not a Bulwark server; said below by status.
  }
  if (response.ok) return peerListOf(body);
  const hint =
    response.status === 401
      ? ": the API key is unknown, revoked or expired; create one with the vpn:read scope"
      : response.status === 403
        ? ": the API key needs the vpn:read scope"
        : "";
  throw refusalOf(url, response, body, "", hint);
}

/**
 * Reports handshakes to the server (POST /api/v1/vpn/handshakes, the key's vpn:report scope): what
 * makes a phone without an agent online there. Throws as fetchPeerList does.
 */
export async function reportHandshakes(
  server: string,
  apiKey: string,
  handshakes: { publicKey: string; epochSeconds: number }[],
  ca: string | null,
  stop?: AbortSignal,
): Promise<void> {
  const url = new URL(`${server}/api/v1/vpn/handshakes`);
  const body = JSON.stringify({
    handshakes: handshakes.map((handshake) => ({
      public_key: handshake.publicKey,
      latest_handshake: new Date(handshake.epochSeconds * 1000).toISOString(),
    })),
  });
  const response = await callServer(
    url,
    apiKey,
    { method: "POST", headers: { "content-type": "application/json" }, body },
    ca,
    stop,
  );
  if (response.ok) {
    await response.body?.cancel();
    return;
  }
  throw refusalOf(url, response, await response.json().catch(() => null), " the handshakes", "");
}
