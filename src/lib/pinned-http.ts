import type http from "node:http";
import { isIP } from "./ip-version";

/** A POST whose connection goes only to `addresses`, answered with a standard Response. */
export type PinnedPost = (
  url: URL,
  addresses: string[],
  init: { headers: Record<string, string>; body: string; signal: AbortSignal },
) => Promise<Response>;

/**
 * POSTs to `url`, connecting only to the given addresses (the ones a target check approved) instead of
 * resolving the name again: between a check and a separate lookup, a name can be re-pointed at an
 * internal address (DNS rebinding). TLS still verifies the certificate for the URL's hostname and sends
 * it as SNI. Redirects are not followed; the body of the answer is discarded.
 */
export const postPinned: PinnedPost = (url, addresses, init) =>
  new Promise<Response>((resolve, reject) => {
    const pinned = addresses.map((address) => ({ address, family: isIP(address) === 6 ? 6 : 4 }));
    const first = pinned[0];
    if (!first) {
      reject(new Error(`no address to connect to for ${url.hostname}`));
      return;
    }
    // Loaded on first use: node:http and node:https took ~6 ms of every start.
    const client = process.getBuiltinModule(url.protocol === "https:" ? "node:https" : "node:http");
    const request = client.request(
      url,
      {
        method: "POST",
        headers: { ...init.headers, "content-length": String(Buffer.byteLength(init.body)) },
        signal: init.signal,
        lookup: (_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
          if (options?.all) callback(null, pinned);
          else callback(null, first.address, first.family);
        },
      } as http.RequestOptions,
      (response) => {
        const headers = new Headers();
        for (const [name, value] of Object.entries(response.headers)) {
          if (typeof value === "string") headers.set(name, value);
          else if (Array.isArray(value)) headers.set(name, value.join(", "));
        }
        response.resume();
        const status = response.statusCode ?? 0;
        // HTTP parsers accept any three digits; a Response cannot hold a status outside 200-599.
        if (status < 200 || status > 599) {
          response.destroy();
          reject(new Error(`receiver answered with an invalid HTTP status ${status}`));
          return;
        }
        response.on("end", () => resolve(new Response(null, { status, headers })));
        response.on("error", reject);
      },
    );
    request.on("error", reject);
    request.end(init.body);
  });
