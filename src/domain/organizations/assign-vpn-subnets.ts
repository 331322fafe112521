import { asc, eq, inArray } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { organizations } from "../../db/tables";
import { toIso } from "../../lib/clock";
import { formatCidr, type Ipv4Cidr, lowestFreeBlock } from "../../lib/ipv4";
import { recordAudit } from "../audit/record-audit";
import { type DomainDeps, systemActor } from "../deps";
import { vpnAddressPool } from "../devices/allocate-vpn-address";
import { type AddressMove, readdressDevices } from "../devices/readdress-devices";
import { UnavailableError } from "../errors";
import { currentSubnet, subnetDeviceRange } from "../vpn/organization-subnets";

/**
 * At start: gives each organization whose subnet is missing (made before subnets existed), outside
 * `vpn.address_pool` or of another length than `vpn.organization_prefix_length` the lowest free block,
 * oldest organization first, and moves its devices whose address lies outside that block into it (they
 * learn their new address at their next check-in). One read of the organizations when nothing is to do.
 * All or nothing: when the pool has too few blocks, or a block too few addresses, nothing changes and
 * the start stops with one line naming the key to change.
 */
export async function assignVpnSubnets(
  deps: DomainDeps,
): Promise<{ organizations: number; devices: number }> {
  const vpn = deps.config.vpn;
  const rows = await deps.db
    .select({ id: organizations.id, name: organizations.name, vpnSubnet: organizations.vpnSubnet })
    .from(organizations)
    .orderBy(asc(organizations.createdAt), asc(organizations.id));
  const kept: Ipv4Cidr[] = [];
  const stale: typeof rows = [];
  for (const row of rows) {
    const subnet = currentSubnet(vpn, row.vpnSubnet);
    // Blocks of one length that are unique (the column's index) cannot overlap: kept as they are.
    if (subnet) kept.push(subnet);
    else stale.push(row);
  }
  if (stale.length === 0) return { organizations: 0, devices: 0 };
  const pool = vpnAddressPool(vpn.address_pool);
  const now = deps.clock.now();
  return await withTransaction(deps.db, async (tx) => {
    // Released first: an organization may take a block another one is leaving (the index is unique).
    const staleIds = stale.map((row) => row.id);
    await tx.update(organizations).set({ vpnSubnet: null }).where(inArray(organizations.id, staleIds));
    const moves: AddressMove[] = [];
    for (const row of stale) {
      const subnet = lowestFreeBlock(pool, vpn.organization_prefix_length, kept);
      if (!subnet) {
        throw new UnavailableError(
          "vpn_pool_misconfigured",
          "the VPN address pool has too few subnets for the organizations",
          `vpn.address_pool ${formatCidr(pool)} holds ${2 ** (vpn.organization_prefix_length - pool.prefixLength)} subnet(s) of /${vpn.organization_prefix_length} and there are ${rows.length} organizations; raise vpn.organization_prefix_length (smaller subnets) or widen vpn.address_pool`,
        );
      }
      kept.push(subnet);
      await tx
        .update(organizations)
        .set({ vpnSubnet: formatCidr(subnet), updatedAt: toIso(now) })
        .where(eq(organizations.id, row.id));
      moves.push({
        organizationId: row.id,
        organizationName: row.name,
        subnet: formatCidr(subnet),
        range: subnetDeviceRange(pool, subnet),
      });
    }
    const moved = await readdressDevices(tx, now, moves);
    for (const [index, row] of stale.entries()) {
      await recordAudit(tx, now, systemActor(row.id), {
        action: "organization.vpn_subnet_assigned",
        targetType: "organization",
        targetId: row.id,
        details: {
          vpn_subnet: moves[index]?.subnet,
          previous_vpn_subnet: row.vpnSubnet,
          devices_readdressed: moved[index],
        },
      });
    }
    return { organizations: stale.length, devices: moved.reduce((sum, count) => sum + count, 0) };
  });
}
