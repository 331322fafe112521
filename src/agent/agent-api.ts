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

/**
 * The agent's client of the public agent API, typed from the OpenAPI document (as the console's is):
 * `server` is the base URL, `ca` a PEM that verifies its TLS certificate when the system's store
 * does not, `token` the device token once enrolled.
 */
export function agentApi(server: string, options: { ca?: string | null; token?: string | null } = {}) {
  const tls = options.ca ? { tls: { ca: options.ca } } : {};
  return createClient<paths>({
    baseUrl: server.replace(/\/+$/, ""),
    headers: {
      "user-agent": "bulwark-agent",
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
    },
    fetch: async (request: Request) => {
      try {
        return await fetch(request, { ...tls, signal: AbortSignal.timeout(30_000) } as RequestInit);
      } catch (error) {
        throw new ServerUnreachable(`${new URL(request.url).origin}: ${(error as Error).message}`);
      }
    },
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
