import type http from "node:http";
import { isIP } from "./ip-version";

/** A POST whose connection goes only to `addresses`, answered with a standard Response. */
export type PinnedPost = (
  url: URL,
  addresses: string[],
  init: { headers: Record<string, string>; body: string; signal: AbortSignal },
) => Promise<Response>;

/** A request whose connection goes only to the given addresses. */
export interface PinnedRequest {
  method: string;
  headers: Record<string, string>;
  body?: string | Uint8Array;
  signal?: AbortSignal;
}

/** An answer's status line and headers, its body still to read. */
interface PinnedAnswer {
  status: number;
  headers: Headers;
  message: http.IncomingMessage;
}

/**
 * Sends a request to `url`, connecting only to the given addresses (the ones a target check approved)
 * instead of resolving the name again: between a check and a separate lookup, a name can be re-pointed
 * at an internal address (DNS rebinding). TLS still verifies the certificate for the URL's hostname and
 * sends it as SNI. Redirects are never followed: a 3xx is the answer.
 */
function requestPinned(url: URL, addresses: string[], init: PinnedRequest): Promise<PinnedAnswer> {
  return new Promise<PinnedAnswer>((resolve, reject) => {
    const pinned = addresses.map((address) => ({ address, family: isIP(address) === 6 ? 6 : 4 }));
    const first = pinned[0];
    if (!first) {
      reject(new Error(`no address to connect to for ${url.hostname}`));
      return;
    }
    const headers: Record<string, string> = { ...init.headers };
    if (init.body !== undefined) headers["content-length"] = String(Buffer.byteLength(init.body));
    // Loaded on first use: node:http and node:https took ~6 ms of every start.
    const client = process.getBuiltinModule(url.protocol === "https:" ? "node:https" : "node:http");
    const request = client.request(
      url,
      {
        method: init.method,
        headers,
        signal: init.signal,
        // A connection of its own: a pooled one to the same host and port may lead to another address,
        // approved for another request under other rules (a webhook's allow_private_targets).
        agent: false,
        lookup: (_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
          if (options?.all) callback(null, pinned);
          else callback(null, first.address, first.family);
        },
      } as http.RequestOptions,
      (message) => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(message.headers)) {
          if (typeof value === "string") headers.set(name, value);
          else if (Array.isArray(value)) headers.set(name, value.join(", "));
        }
        const status = message.statusCode ?? 0;
        // HTTP parsers accept any three digits; a Response cannot hold a status outside 200-599.
        if (status < 200 || status > 599) {
          message.destroy();
          reject(new Error(`the server answered with an invalid HTTP status ${status}`));
          return;
        }
        resolve({ status, headers, message });
      },
    );
    request.on("error", reject);
    request.end(init.body);
  });
}

/** Reads an answer's body to its end, handing each chunk to `onData` (which may throw to stop). */
function readToEnd(message: http.IncomingMessage, onData: (chunk: Buffer) => void): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    message.on("data", (chunk: Buffer) => {
      try {
        onData(chunk);
      } catch (error) {
        message.destroy();
        reject(error);
      }
    });
    message.on("end", resolve);
    message.on("error", reject);
    message.on("close", () => {
      if (!message.complete) reject(new Error("the connection closed before the answer ended"));
    });
  });
}

/** POSTs to the approved addresses only (see requestPinned); the body of the answer is discarded. */
export const postPinned: PinnedPost = async (url, addresses, init) => {
  const answer = await requestPinned(url, addresses, { method: "POST", ...init });
  await readToEnd(answer.message, () => {});
  return new Response(null, { status: answer.status, headers: answer.headers });
};

/** Statuses whose Response has no body. */
const BODILESS_STATUSES = new Set([204, 205, 304]);

/**
 * Sends a request to the approved addresses only (see requestPinned) and reads the answer's body, up to
 * `maxBodyBytes`: a longer answer is an error, not held in memory.
 */
export async function fetchPinned(
  url: URL,
  addresses: string[],
  init: PinnedRequest & { maxBodyBytes: number },
): Promise<Response> {
  const answer = await requestPinned(url, addresses, init);
  const chunks: Buffer[] = [];
  let length = 0;
  await readToEnd(answer.message, (chunk) => {
    length += chunk.length;
    if (length > init.maxBodyBytes) throw new Error(`the answer is longer than ${init.maxBodyBytes} bytes`);
    chunks.push(chunk);
  });
  const body = BODILESS_STATUSES.has(answer.status) ? null : Buffer.concat(chunks);
  return new Response(body, { status: answer.status, headers: answer.headers });
}
