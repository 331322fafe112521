import type { Config } from "../config/config-schema";
import {
  formatIpAddress,
  type IpNetwork,
  isInNetworks,
  parseIpAddress,
  parseIpNetwork,
} from "../lib/ip-networks";

/** Whom `server.trust_proxy = true` trusts while `server.trusted_proxies` is empty: this machine. */
const LOOPBACK = ["127.0.0.0/8", "::1"];

const parsedLists = new WeakMap<readonly string[], readonly IpNetwork[]>();

/**
 * The networks whose connections may speak for a client (X-Forwarded-For, Client-Cert): none without
 * `server.trust_proxy`, `server.trusted_proxies` when set, else loopback. The list was checked when the
 * configuration was loaded; it is parsed once.
 */
function trustedNetworks(server: Config["server"]): readonly IpNetwork[] {
  if (!server.trust_proxy) return [];
  let networks = parsedLists.get(server.trusted_proxies);
  if (!networks) {
    const entries = server.trusted_proxies.length > 0 ? server.trusted_proxies : LOOPBACK;
    networks = entries.flatMap((entry) => parseIpNetwork(entry) ?? []);
    parsedLists.set(server.trusted_proxies, networks);
  }
  return networks;
}

/**
 * Whether the connection's peer is a trusted proxy, whose forwarded headers are honoured. Anyone else
 * who reaches the port could otherwise choose their address (and so their rate-limit and sign-in
 * lockout budget) and present any device certificate they have seen, without its private key.
 */
export function isTrustedProxy(server: Config["server"], peer: string): boolean {
  const networks = trustedNetworks(server);
  if (networks.length === 0) return false;
  const address = parseIpAddress(peer);
  return address !== null && isInNetworks(address, networks);
}

/**
 * The client address a trusted proxy forwarded in X-Forwarded-For, read from the right as chained
 * proxies append to it: the first entry that is not itself a trusted proxy (entries further left were
 * written by the client or by proxies we do not know), or the left-most when every entry is one.
 * Normalised (IPv6 as RFC 5952 writes it). Null when the header is absent or an entry read is not a
 * bare IP address: then the peer's own address stands, and nothing the header said is kept or logged.
 */
export function forwardedClientAddress(server: Config["server"], header: string | null): string | null {
  if (header === null) return null;
  const networks = trustedNetworks(server);
  let end = header.length;
  while (end >= 0) {
    const start = header.lastIndexOf(",", end - 1);
    const address = parseIpAddress(header.slice(start + 1, end).trim());
    if (address === null) return null;
    if (start === -1 || !isInNetworks(address, networks)) return formatIpAddress(address);
    end = start;
  }
  return null;
}
