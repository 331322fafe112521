import { sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { selectRows } from "../../db/dialect";
import { devices } from "../../db/tables";
import { hostRange, type Ipv4Cidr, type Ipv4Range, parseCidr } from "../../lib/ipv4";
import { ConflictError, UnavailableError } from "../errors";

/** The configured pool (`vpn.address_pool`) as a network; 503 if it is not one. */
export function vpnAddressPool(addressPool: string): Ipv4Cidr {
  const cidr = parseCidr(addressPool);
  if (!cidr) {
    throw new UnavailableError(
      "vpn_pool_misconfigured",
      "the VPN address pool is misconfigured",
      `vpn.address_pool "${addressPool}" is not an IPv4 network such as 10.100.0.0/16`,
    );
  }
  return cidr;
}

/** The addresses devices may receive from the whole configured pool (`vpn.address_pool`). */
export function vpnAddressRange(addressPool: string): Ipv4Range {
  return hostRange(vpnAddressPool(addressPool));
}

/**
 * The lowest free address of `range` (the organization's subnet, `block`), found by one query over the
 * unique index on devices.vpn_address: the first address if free, else the first allocated address
 * whose successor is free. Addresses are unique across organizations (one VPN). Throws 409 when the
 * subnet is exhausted.
 */
export async function allocateVpnAddress(tx: DbOrTx, range: Ipv4Range, block: string): Promise<number> {
  const [found] = await selectRows<{ address: number | string | null }>(
    tx,
    sql`
    SELECT coalesce(
      (SELECT ${range.first} WHERE NOT EXISTS (
        SELECT 1 FROM ${devices} WHERE ${devices.vpnAddress} = ${range.first})),
      (SELECT taken.vpn_address + 1 FROM ${devices} AS taken
        WHERE taken.vpn_address >= ${range.first} AND taken.vpn_address < ${range.last}
          AND NOT EXISTS (SELECT 1 FROM ${devices} AS next WHERE next.vpn_address = taken.vpn_address + 1)
        ORDER BY taken.vpn_address LIMIT 1)
    ) AS address`,
  );
  // PostgreSQL answers a bigint as text.
  const address = found?.address === null || found?.address === undefined ? null : Number(found.address);
  if (range.first > range.last || address === null) {
    throw new ConflictError(
      "vpn_pool_exhausted",
      "the organization's VPN subnet is exhausted",
      `every address of the organization's subnet ${block} is held by a device; delete wiped devices, or give organizations larger subnets (lower vpn.organization_prefix_length, or widen vpn.address_pool)`,
    );
  }
  return address;
}
