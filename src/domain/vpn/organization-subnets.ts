import { eq } from "drizzle-orm";
import type { Config } from "../../config/config-schema";
import type { DbOrTx } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { organizations } from "../../db/tables";
import {
  cidrContains,
  formatCidr,
  formatIpv4,
  type Ipv4Cidr,
  type Ipv4Range,
  lowestFreeBlock,
  parseCidr,
} from "../../lib/ipv4";
import { vpnAddressPool } from "../devices/allocate-vpn-address";
import { ConflictError } from "../errors";

/**
 * Each organization has its own block of `vpn.address_pool` (`organizations.vpn_subnet`), of
 * `vpn.organization_prefix_length`: its devices' addresses come from it, their tunnels route it, and the
 * server's exported rules drop forwarding between blocks. The server keeps the pool's first host.
 */

/** The VPN server's tunnel address: the pool's first host, which no device ever gets. */
export function vpnServerAddress(pool: Ipv4Cidr): number {
  return pool.network + 1;
}

/** A stored subnet when it still fits the configuration (inside the pool, of the configured length), else null. */
export function currentSubnet(vpn: Config["vpn"], stored: string | null): Ipv4Cidr | null {
  const subnet = stored === null ? null : parseCidr(stored);
  if (!subnet || subnet.prefixLength !== vpn.organization_prefix_length) return null;
  return cidrContains(vpnAddressPool(vpn.address_pool), subnet) ? subnet : null;
}

/**
 * The lowest block of the pool that none of `taken` overlaps, for a new organization; 409
 * vpn_pool_exhausted, naming the keys to change, when every block is taken.
 */
export function nextOrganizationSubnet(vpn: Config["vpn"], taken: Ipv4Cidr[]): Ipv4Cidr {
  const pool = vpnAddressPool(vpn.address_pool);
  const subnet = lowestFreeBlock(pool, vpn.organization_prefix_length, taken);
  if (!subnet) {
    const blocks = 2 ** (vpn.organization_prefix_length - pool.prefixLength);
    throw new ConflictError(
      "vpn_pool_exhausted",
      "the VPN address pool has no subnet left for another organization",
      `vpn.address_pool ${formatCidr(pool)} holds ${blocks} subnet(s) of /${vpn.organization_prefix_length} and every one is an organization's; raise vpn.organization_prefix_length (smaller subnets) or widen vpn.address_pool`,
    );
  }
  return subnet;
}

/** The addresses of `subnet` that devices may get: all but its first and last, and the server's. */
export function subnetDeviceRange(pool: Ipv4Cidr, subnet: Ipv4Cidr): Ipv4Range {
  if (subnet.prefixLength > 30) return { first: 1, last: 0 };
  const server = vpnServerAddress(pool);
  return {
    first: subnet.network + 1 === server ? server + 1 : subnet.network + 1,
    last: subnet.network + 2 ** (32 - subnet.prefixLength) - 2,
  };
}

/**
 * The addresses an organization's devices may get, and the subnet they come from; for a database the
 * start has not prepared (no subnet yet), the whole pool.
 */
export function organizationAddressBlock(
  vpn: Config["vpn"],
  stored: string | null,
): { subnet: string; range: Ipv4Range } {
  const pool = vpnAddressPool(vpn.address_pool);
  const subnet = (stored === null ? null : parseCidr(stored)) ?? pool;
  return { subnet: formatCidr(subnet), range: subnetDeviceRange(pool, subnet) };
}

/**
 * An organization's subnet as stored; null only for a database the start has not prepared. Read at each
 * call: `bulwark admin create`, in another process, may have created the organization.
 */
export async function organizationVpnSubnet(db: DbOrTx, organizationId: string): Promise<string | null> {
  return (
    (
      await firstRow(
        db
          .select({ vpnSubnet: organizations.vpnSubnet })
          .from(organizations)
          .where(eq(organizations.id, organizationId)),
      )
    )?.vpnSubnet ?? null
  );
}

/** Default allowed_ips by pool and subnet: a handful of organizations, so the map stays small. */
const allowedIpsBySubnet = new Map<string, readonly string[]>();

/**
 * What a device routes through its tunnel by default: its organization's subnet, and the server's own
 * address when that lies outside it (every organization but the first). Without a subnet, the pool.
 */
export function organizationAllowedIps(addressPool: string, subnet: string | null): readonly string[] {
  const key = `${addressPool} ${subnet}`;
  const known = allowedIpsBySubnet.get(key);
  if (known) return known;
  const pool = vpnAddressPool(addressPool);
  const block = subnet === null ? null : parseCidr(subnet);
  const server = vpnServerAddress(pool);
  const allowed = !block
    ? [formatCidr(pool)]
    : cidrContains(block, { network: server, prefixLength: 32 })
      ? [formatCidr(block)]
      : [formatCidr(block), `${formatIpv4(server)}/32`];
  const frozen = Object.freeze(allowed);
  allowedIpsBySubnet.set(key, frozen);
  return frozen;
}
