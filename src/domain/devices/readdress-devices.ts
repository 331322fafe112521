import { and, asc, eq, gt, gte, inArray, isNotNull, lt, lte, or } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { devices } from "../../db/tables";
import { toIso } from "../../lib/clock";
import { formatIpv4, type Ipv4Range } from "../../lib/ipv4";
import { UnavailableError } from "../errors";
import { appendDeviceLog } from "./append-device-log";

/** One organization whose devices must hold addresses of `range` (its subnet, `subnet`). */
export interface AddressMove {
  organizationId: string;
  organizationName: string;
  subnet: string;
  range: Ipv4Range;
}

/**
 * Gives every device of the moved organizations whose address lies outside its range the lowest free
 * address inside it, in the caller's transaction, and logs `device.vpn_readdressed` on each (the device
 * learns its address at its next check-in). The addresses being left are released first, so that
 * organizations can trade blocks. Returns how many devices moved, by organization; 503 vpn_pool_misconfigured, naming
 * the key, when a range cannot hold its organization's devices.
 */
export async function readdressDevices(tx: DbOrTx, now: Date, moves: AddressMove[]): Promise<number[]> {
  const leaving: { id: string; address: number | null }[][] = [];
  for (const move of moves) {
    leaving.push(
      await tx
        .select({ id: devices.id, address: devices.vpnAddress })
        .from(devices)
        .where(
          and(
            eq(devices.organizationId, move.organizationId),
            isNotNull(devices.vpnAddress),
            or(lt(devices.vpnAddress, move.range.first), gt(devices.vpnAddress, move.range.last)),
          ),
        )
        .orderBy(asc(devices.vpnAddress)),
    );
  }
  const released = leaving.flat().map((device) => device.id);
  for (let index = 0; index < released.length; index += 500) {
    await tx
      .update(devices)
      .set({ vpnAddress: null })
      .where(inArray(devices.id, released.slice(index, index + 500)));
  }
  const timestamp = toIso(now);
  for (const [index, move] of moves.entries()) {
    const movers = leaving[index] ?? [];
    if (movers.length === 0) continue;
    const free = freeAddresses(await heldAddresses(tx, move.range), move.range);
    for (const device of movers) {
      const address = free.next();
      if (address.done) {
        const size = move.range.last - move.range.first + 1;
        throw new UnavailableError(
          "vpn_pool_misconfigured",
          "an organization's devices do not fit in its VPN subnet",
          `organization "${move.organizationName}" has more devices than its subnet ${move.subnet} holds (${size}); lower vpn.organization_prefix_length (larger subnets) or widen vpn.address_pool`,
        );
      }
      await tx
        .update(devices)
        .set({ vpnAddress: address.value, updatedAt: timestamp })
        .where(eq(devices.id, device.id));
      await appendDeviceLog(tx, now, device.id, "device.vpn_readdressed", {
        from: formatIpv4(device.address ?? 0),
        to: formatIpv4(address.value),
        subnet: move.subnet,
      });
    }
  }
  return leaving.map((movers) => movers.length);
}

/** The addresses of `range` that devices hold, lowest first. */
async function heldAddresses(tx: DbOrTx, range: Ipv4Range) {
  return await tx
    .select({ address: devices.vpnAddress })
    .from(devices)
    .where(and(gte(devices.vpnAddress, range.first), lte(devices.vpnAddress, range.last)))
    .orderBy(asc(devices.vpnAddress));
}

/** The addresses of `range` not in `held` (ascending), lowest first. */
function* freeAddresses(held: { address: number | null }[], range: Ipv4Range): Generator<number> {
  let candidate = range.first;
  for (const { address } of held) {
    if (address === null) continue;
    for (; candidate < address; candidate++) yield candidate;
    candidate = address + 1;
  }
  for (; candidate <= range.last; candidate++) yield candidate;
}
