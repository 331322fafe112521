import { type Static, Type } from "@sinclair/typebox";
import { EXAMPLE_VPN_ENDPOINT } from "../../config/config-schema";
import { isExampleEndpoint } from "../../config/config-warnings";
import { formatIpv4 } from "../../lib/ipv4";
import type { DomainDeps } from "../deps";
import { vpnAddressPool } from "../devices/allocate-vpn-address";
import { organizationVpnSubnet } from "./organization-subnets";
import { wireGuardServerPublicKey } from "./server-key";

export const VpnSettingsSchema = Type.Object(
  {
    endpoint: Type.String({ description: "host:port every device's tunnel goes to (vpn.endpoint)" }),
    endpoint_is_example: Type.Boolean({
      description: `true while vpn.endpoint names a host reserved for examples (the default ${EXAMPLE_VPN_ENDPOINT}, any example.com, .net or .org name, .example, .invalid): devices enrolled now get a tunnel to a host that does not exist`,
    }),
    server_public_key: Type.String(),
    key_managed_by: Type.Union([Type.Literal("bulwark"), Type.Literal("operator")], {
      description: "operator when vpn.server_public_key is set: the operator's server keeps its private key",
    }),
    address_pool: Type.String({ description: "vpn.address_pool, in CIDR notation" }),
    organization_subnet: Type.Union([Type.String(), Type.Null()], {
      description:
        "This organization's block of the pool: its devices' addresses come from it, and their tunnels route it (and the server's address)",
    }),
    dns: Type.Array(Type.String()),
    persistent_keepalive: Type.Integer(),
  },
  { title: "VpnSettings" },
);

export type VpnSettings = Static<typeof VpnSettingsSchema>;

/**
 * The VPN settings the organization's enrolled devices receive, and whether the endpoint is still the
 * example.
 */
export async function vpnSettings(deps: DomainDeps, organizationId: string): Promise<VpnSettings> {
  const { endpoint, server_public_key, address_pool, dns, persistent_keepalive } = deps.config.vpn;
  const pool = vpnAddressPool(address_pool);
  return {
    endpoint,
    endpoint_is_example: isExampleEndpoint(endpoint),
    server_public_key: await wireGuardServerPublicKey(deps),
    key_managed_by: server_public_key === "" ? "bulwark" : "operator",
    address_pool: `${formatIpv4(pool.network)}/${pool.prefixLength}`,
    organization_subnet: await organizationVpnSubnet(deps.db, organizationId),
    dns: [...dns],
    persistent_keepalive,
  };
}
