import { bootDependencies } from "../boot";
import type { Config } from "../config/config-schema";
import { systemActor } from "../domain/deps";
import { vpnServerConfig } from "../domain/vpn/vpn-server-config";

/**
 * `bulwark vpn server-config`: the WireGuard server's wg-quick file for the whole installation (every
 * organization's peers, and the private key when Bulwark holds it), on standard output. Safe while
 * serving; audited like the API's export.
 */
export async function vpnServerConfigCommand(config: Readonly<Config>): Promise<void> {
  const { deps, database } = await bootDependencies(config);
  try {
    process.stdout.write((await vpnServerConfig(deps, systemActor(), "installation")).wg_quick);
  } finally {
    await database.close();
  }
}
