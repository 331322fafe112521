import { type Config, EXAMPLE_VPN_ENDPOINT, isPostgresConfig } from "./config-schema";

/**
 * Whether a host:port names a host reserved for examples (RFC 2606: example.com, .net, .org and their
 * subdomains, the .example and .invalid top-level domains), in any case: no device can reach it.
 */
export function isExampleEndpoint(endpoint: string): boolean {
  const host = endpoint.replace(/:\d*$/, "").replace(/\.$/, "").toLowerCase();
  return /(?:^|\.)example\.(?:com|net|org)$|\.(?:example|invalid)$/.test(host);
}

/**
 * What a valid configuration still gets wrong for a real installation, one line each naming the key:
 * `serve` logs them as warnings at every start and `config check` prints them.
 */
export function configWarnings(config: Readonly<Config>): string[] {
  const warnings: string[] = [];
  const { endpoint } = config.vpn;
  if (isExampleEndpoint(endpoint))
    warnings.push(
      `vpn.endpoint is ${endpoint === EXAMPLE_VPN_ENDPOINT ? "still the example" : "an example host,"} ${endpoint}: every device enrolled gets a tunnel to a host that does not exist; set it (BULWARK_VPN_ENDPOINT) to your WireGuard server's public host:port`,
    );
  if (isPostgresConfig(config.database) && config.server.base_url === "")
    warnings.push(
      "database.url is PostgreSQL and server.base_url is empty: replicas behind a load balancer must share one public URL (it is the issuer of every token, and passkeys and single sign-on are bound to it), or a token one replica issues is refused by another; set it (BULWARK_SERVER_BASE_URL) to the address clients use",
    );
  return warnings;
}
