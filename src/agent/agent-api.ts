import createClient from "openapi-fetch";
import type { components, paths } from "../console/api/schema";

export type AgentSchemas = components["schemas"];

/** The server refused (an answer with the error body): its status, reason, details and request id. */
export class ServerRefusal extends Error {
  constructor(
    readonly status: number,
    readonly reason: string,
    readonly details: string | undefined,
    readonly requestId: string | undefined,
    /** The server's Retry-After (429, 503), in seconds. */
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(details ? `${reason}: ${details}` : reason);
  }
}

/** The server could not be reached, or its TLS certificate was not trusted. */
export class ServerUnreachable extends Error {}

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
export function agentApi(server: string, options: { ca?: string | null } & DeviceCredentials = {}) {
  const ca: { ca?: string } = options.ca ? { ca: options.ca } : {};
  const baseUrl = server.replace(/\/+$/, "");
  const certificate = options.certificate && baseUrl.startsWith("https:") ? options.certificate : null;
  let isCertificateRefused = certificate === null;
  let credential: "device_certificate" | "device_token" | null = null;

  const send = async (request: Request, tls: { ca?: string; cert?: string; key?: string }) => {
    try {
      return await fetch(request, { tls, signal: AbortSignal.timeout(30_000) } as RequestInit);
    } catch (error) {
      throw new ServerUnreachable(`${new URL(request.url).origin}: ${(error as Error).message}`);
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
  return Object.assign(client, { credential: () => credential });
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
  throw new ServerRefusal(
    result.response.status,
    body.reason ?? `http_${result.response.status}`,
    body.details ?? body.message,
    body.request_id ?? result.response.headers.get("x-request-id") ?? undefined,
    retryAfterOf(result.response.headers.get("retry-after")),
  );
}

/** Retry-After in seconds (a number of seconds or an HTTP date), or null. */
function retryAfterOf(header: string | null): number | null {
  if (header === null) return null;
  if (/^\d+$/.test(header.trim())) return Number(header.trim());
  const at = Date.parse(header);
  return Number.isNaN(at) ? null : Math.max(0, (at - Date.now()) / 1000);
}
