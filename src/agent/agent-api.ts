import createClient from "openapi-fetch";
import type { components, paths } from "../console/api/schema";

export type AgentSchemas = components["schemas"];

/**
 * The server refused (an answer that is not a success): its status, reason, details and request id.
 * An answer without Bulwark's error body (another server, a proxy's page) has the reason `http_STATUS`.
 */
export class ServerRefusal extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    readonly details: string | undefined,
    readonly requestId: string | undefined,
    /** The server's Retry-After (429, 503), in seconds. */
    readonly retryAfterSeconds: number | null = null,
    /** The answer was Bulwark's JSON error body (`{code, reason, message, request_id}`). */
    readonly isErrorBody = true,
  ) {
    super(details ? `${reason}: ${details}` : reason);
  }
}

/** A success whose body is not the API's (not JSON, or not the operation's answer): not a Bulwark server. */
export class UnexpectedAnswer extends Error {}

/** The server could not be reached, or its TLS certificate was not trusted. */
export class ServerUnreachable extends Error {}

/** How long a request may take before the server counts as unreachable. */
const REQUEST_TIMEOUT_MS = 30_000;

/** OpenSSL's verification errors that mean the certificate's issuer is not trusted on this machine. */
const UNTRUSTED_CERTIFICATE = new Set([
  "DEPTH_ZERO_SELF_SIGNED_CERT",
  "SELF_SIGNED_CERT_IN_CHAIN",
  "UNABLE_TO_VERIFY_LEAF_SIGNATURE",
  "UNABLE_TO_GET_ISSUER_CERT",
  "UNABLE_TO_GET_ISSUER_CERT_LOCALLY",
  "CERT_UNTRUSTED",
]);

/**
 * A failed request to `url` as one line for the person at the machine: the cause and what to do for
 * the common ones (an untrusted certificate, nothing listening, http spoken to https, a name that does
 * not resolve, no answer), the runtime's own words after it in parentheses.
 */
function describeRequestFailure(url: URL, error: unknown): string {
  const { code, name, message } = error as { code?: unknown; name?: unknown; message?: unknown };
  const original = (String(message ?? error).split("\n")[0] ?? "").replace(
    /\s*For more information, pass `verbose: true`.*$/,
    "",
  );
  const hint = failureHint(url, String(code), String(name), original);
  return hint ? `${hint} (${original})` : original;
}

function failureHint(url: URL, code: string, name: string, message: string): string | null {
  const isHttps = url.protocol === "https:";
  const port = url.port || (isHttps ? "443" : "80");
  if (UNTRUSTED_CERTIFICATE.has(code) || /self[- ]signed|unable to verify|unknown ca/i.test(message))
    return "the server's TLS certificate is not trusted: pass --ca-file with the CA that signed it (enroll) or fix the system's trust store";
  if (code === "ERR_TLS_CERT_ALTNAME_INVALID")
    return `the server's TLS certificate is not issued for ${url.hostname}: use a name it was issued for in the URL`;
  if (code === "CERT_HAS_EXPIRED") return "the server's TLS certificate has expired";
  if (code === "CERT_NOT_YET_VALID")
    return "the server's TLS certificate is not valid yet: is this machine's clock right?";
  if (code === "ECONNREFUSED")
    return `nothing listens at ${url.hostname}:${port}: is the server running, and is the URL right?`;
  if (code === "ECONNRESET" && !isHttps) return "the connection was closed: does the server speak https?";
  if (code === "EPROTO" && isHttps)
    return `the TLS handshake failed: does the server speak https on port ${port}, or only http?`;
  if (code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "EAI_NONAME")
    return `cannot resolve ${url.hostname}: is the name right, and does this machine's DNS work?`;
  if (code === "EHOSTUNREACH" || code === "ENETUNREACH")
    return `no route to ${url.hostname}: is this machine's network up?`;
  if (name === "TimeoutError")
    return `no answer from ${url.hostname}:${port} within ${REQUEST_TIMEOUT_MS / 1000} s: is the server overloaded, or a firewall dropping the connection?`;
  return null;
}

/** How the agent proves it is the device: its token, and its certificate where TLS can carry it. */
export interface DeviceCredentials {
  token?: string | null;
  /** Presented in the TLS handshake of an https server, before the token is tried. */
  certificate?: { cert: string; key: string } | null;
  /** The server answered 401 to the certificate (its reason): the request went again with the token. */
  onCertificateRefused?: (reason: string) => void;
}

/**
 * The agent's client of the public agent API, typed from the OpenAPI document (as the console's is):
 * `server` is the base URL, `ca` a PEM that verifies its TLS certificate when the system's store does
 * not. Once enrolled, a request authenticates with the device certificate when the server is https and
 * the certificate is given; a 401 to it (a proxy that does not forward the certificate, a revoked one)
 * sends the request again with the device token, and the certificate is not presented again by this
 * client. `credential()` says which one the last answer came to.
 */
export function agentApi(
  server: string,
  options: {
    ca?: string | null;
    /** Why the CA that verifies the server could not be read: every request fails with it, unsent. */
    caProblem?: string | null;
  } & DeviceCredentials = {},
) {
  const ca: { ca?: string } = options.ca ? { ca: options.ca } : {};
  const baseUrl = server.replace(/\/+$/, "");
  const certificate = options.certificate && baseUrl.startsWith("https:") ? options.certificate : null;
  let isCertificateRefused = certificate === null;
  let credential: "device_certificate" | "device_token" | null = null;
  /** The server's clock less this machine's, from the last answer's Date header (to the second). */
  let clockOffsetMs: number | null = null;

  const send = async (request: Request, tls: { ca?: string; cert?: string; key?: string }) => {
    if (options.caProblem)
      throw new ServerUnreachable(`${new URL(request.url).origin}: ${options.caProblem}`);
    try {
      const sentAt = Date.now();
      const response = await fetch(request, {
        tls,
        signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
      } as RequestInit);
      const serverDate = Date.parse(response.headers.get("date") ?? "");
      // The server's second, against the middle of the exchange on this machine's clock.
      if (!Number.isNaN(serverDate)) clockOffsetMs = serverDate + 500 - (sentAt + Date.now()) / 2;
      return response;
    } catch (error) {
      const url = new URL(request.url);
      throw new ServerUnreachable(`${url.origin}: ${describeRequestFailure(url, error)}`);
    }
  };
  const client = createClient<paths>({
    baseUrl,
    headers: { "user-agent": "bulwark-agent" },
    fetch: async (request: Request) => {
      if (!isCertificateRefused && certificate) {
        const again = options.token ? request.clone() : null;
        const response = await send(request, { ...ca, cert: certificate.cert, key: certificate.key });
        credential = "device_certificate";
        if (response.status !== 401 || again === null) return response;
        isCertificateRefused = true;
        const body = (await response.json().catch(() => ({}))) as { reason?: string };
        options.onCertificateRefused?.(body.reason ?? "http_401");
        request = again;
      }
      if (options.token) {
        request.headers.set("authorization", `Bearer ${options.token}`);
        credential = "device_token";
      }
      return send(request, ca);
    },
  });
  return Object.assign(client, {
    credential: () => credential,
    clockOffsetMs: () => clockOffsetMs,
  });
}

/** The answer's data, or the refusal it carries as a ServerRefusal. */
export function answerOf<T>(result: { data?: T; error?: unknown; response: Response }): T {
  if (result.data !== undefined && result.response.ok) return result.data;
  const body = (result.error ?? {}) as {
    reason?: string;
    message?: string;
    details?: string;
    request_id?: string;
  };
  const isErrorBody =
    typeof body === "object" &&
    typeof body.reason === "string" &&
    typeof body.message === "string" &&
    typeof body.request_id === "string";
  throw new ServerRefusal(
    result.response.status,
    (isErrorBody && body.reason) || `http_${result.response.status}`,
    isErrorBody ? (body.details ?? body.message) : undefined,
    (isErrorBody && body.request_id) || (result.response.headers.get("x-request-id") ?? undefined),
    retryAfterOf(result.response.headers.get("retry-after")),
    isErrorBody,
  );
}

/** Retry-After in seconds (a number of seconds or an HTTP date), or null. */
function retryAfterOf(header: string | null): number | null {
  if (header === null) return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, (at - Date.now()) / 1000);
}
