import { type Config, EXAMPLE_VPN_ENDPOINT } from "./config-schema";

/**
 * What a valid configuration still gets wrong for a real installation, one line each naming the key:
 * `serve` logs them as warnings at every start and `config check` prints them.
 */
export function configWarnings(config: Readonly<Config>): string[] {
  const warnings: string[] = [];
  if (config.vpn.endpoint === EXAMPLE_VPN_ENDPOINT)
    warnings.push(
      `vpn.endpoint is still the example ${EXAMPLE_VPN_ENDPOINT}: every device enrolled gets a tunnel to a host that does not exist; set it (BULWARK_VPN_ENDPOINT) to your WireGuard server's public host:port`,
    );
  return warnings;
}
