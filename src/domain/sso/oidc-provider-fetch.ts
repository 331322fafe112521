import type { CustomFetch } from "openid-client";
import type { Config } from "../../config/config-schema";
import { isIP } from "../../lib/ip-version";
import {
  classifyIpAddress,
  type IpAddressClassification,
  isCloudMetadataAddress,
  resolveHostAddresses,
} from "../../lib/network-address";
import { fetchPinned } from "../../lib/pinned-http";

/** The longest answer read from a provider: discovery documents, key sets and tokens are kilobytes. */
const MAX_ANSWER_BYTES = 1024 * 1024;

/** A provider's host resolved to an address this server does not connect to; the message says which. */
export class ProviderAddressRefusedError extends Error {
  override name = "ProviderAddressRefusedError";
}

/**
 * Why this server does not connect to `address` for an identity provider, or null when it may. Link-local
 * addresses (169.254.169.254 is the cloud metadata service, which hands out the machine's credentials)
 * and the metadata services elsewhere are never reached; loopback, private and other non-public
 * addresses only with `auth.oidc_allow_private_issuers`.
 */
export function providerAddressRefusal(address: string, allowPrivate: boolean): string | null {
  let classification: IpAddressClassification;
  try {
    classification = classifyIpAddress(address);
  } catch {
    return `${address} is not an IP address`;
  }
  if (isCloudMetadataAddress(address)) return `${address} is a cloud metadata service, never reached`;
  if (classification === "link_local" || classification === "multicast")
    return `${address} is ${classification}, never reached`;
  if (classification !== "public" && !allowPrivate)
    return `${address} is ${classification}, reached only with auth.oidc_allow_private_issuers`;
  return null;
}

/** A request body as bytes (openid-client sends forms as URLSearchParams and sets their content-type). */
async function bodyBytes(body: Parameters<CustomFetch>[1]["body"]): Promise<string | Uint8Array | undefined> {
  if (body === undefined || body === null) return undefined;
  if (typeof body === "string" || body instanceof Uint8Array) return body;
  if (body instanceof URLSearchParams) return body.toString();
  return new Uint8Array(await new Response(body).arrayBuffer());
}

/**
 * The fetch every request to an identity provider goes through (discovery, keys, token, userinfo: the
 * discovery document names those endpoints, possibly on other hosts). Each request resolves its host,
 * checks every address (providerAddressRefusal) and connects only to those, so a name cannot be
 * re-pointed between the check and the connection (DNS rebinding); redirects are not followed.
 */
export function providerFetch(config: Readonly<Config>): CustomFetch {
  const allowPrivate = config.auth.oidc_allow_private_issuers;
  return async (resource, options) => {
    const url = new URL(resource);
    const addresses = await resolveHostAddresses(url.hostname);
    options.signal?.throwIfAborted();
    if (addresses.length === 0) throw new Error(`${url.hostname} does not resolve`);
    const isName = isIP(url.hostname.replace(/^\[|\]$/g, "")) === 0;
    for (const address of addresses) {
      const refusal = providerAddressRefusal(address, allowPrivate);
      if (refusal) throw new ProviderAddressRefusedError(isName ? `${url.hostname}: ${refusal}` : refusal);
    }
    return fetchPinned(url, addresses, {
      method: options.method,
      headers: options.headers,
      body: await bodyBytes(options.body),
      signal: options.signal,
      maxBodyBytes: MAX_ANSWER_BYTES,
    });
  };
}
