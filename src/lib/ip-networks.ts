import { parseIpv4 } from "./ipv4";
import { ipv6Groups } from "./network-address";

/**
 * An IP address: IPv4 as an unsigned 32-bit number, IPv6 as its eight 16-bit groups. Plain numbers,
 * not BigInt: a peer is checked on every request behind a proxy, and BigInt arithmetic made an IPv6
 * address cost ~15 µs to read and write again.
 */
export type IpAddress = { version: 4; value: number } | { version: 6; groups: readonly number[] };

/** An IPv4 or IPv6 network: its address (no bits set beyond the prefix) and prefix length. */
export type IpNetwork =
  | { version: 4; network: number; prefixLength: number; mask: number }
  | { version: 6; groups: readonly number[]; prefixLength: number };

const PREFIX_LENGTH = /^(?:0|[1-9][0-9]{0,2})$/;

/**
 * A bare IPv4 or IPv6 address (no zone id, brackets or port); an IPv4-mapped IPv6 address
 * (::ffff:192.0.2.1, as a dual-stack socket reports an IPv4 peer) is its IPv4 address. Null otherwise.
 */
export function parseIpAddress(text: string): IpAddress | null {
  if (!text.includes(":")) {
    const value = parseIpv4(text);
    return value === null ? null : { version: 4, value };
  }
  const groups = ipv6Groups(text);
  if (!groups) return null;
  const isMapped = groups[5] === 0xffff && groups.slice(0, 5).every((group) => group === 0);
  return isMapped
    ? { version: 4, value: (groups[6] ?? 0) * 0x10000 + (groups[7] ?? 0) }
    : { version: 6, groups };
}

/**
 * An address ("10.0.0.5", "2001:db8::1": the one address) or a network in CIDR notation ("10.0.0.0/8",
 * "2001:db8::/32"). Null for anything else, and for a network whose address has bits set beyond its
 * prefix ("10.0.0.1/8" names a host, probably not what was meant). An IPv4-mapped network
 * (::ffff:10.0.0.0/104) is its IPv4 network.
 */
export function parseIpNetwork(text: string): IpNetwork | null {
  const [addressText = "", prefixText, ...rest] = text.split("/");
  const address = rest.length === 0 ? parseIpAddress(addressText) : null;
  if (!address) return null;
  const bits = address.version === 4 ? 32 : 128;
  let prefixLength = bits;
  if (prefixText !== undefined) {
    if (!PREFIX_LENGTH.test(prefixText)) return null;
    const isMapped = address.version === 4 && addressText.includes(":");
    prefixLength = Number(prefixText) - (isMapped ? 96 : 0);
  }
  if (prefixLength < 0 || prefixLength > bits) return null;
  if (address.version === 4) {
    const mask = prefixLength === 0 ? 0 : (0xffffffff << (32 - prefixLength)) >>> 0;
    if ((address.value & mask) >>> 0 !== address.value) return null;
    return { version: 4, network: address.value, prefixLength, mask };
  }
  const network = { version: 6 as const, groups: address.groups, prefixLength };
  return address.groups.every((group, index) => (group & groupMask(network, index)) === group)
    ? network
    : null;
}

/** The bits of group `index` (0-7) that lie within the network's prefix. */
function groupMask(network: { prefixLength: number }, index: number): number {
  const bits = Math.min(16, Math.max(0, network.prefixLength - 16 * index));
  return (0xffff << (16 - bits)) & 0xffff;
}

/** Whether the address lies in one of the networks (an IPv4 address only in IPv4 networks). */
export function isInNetworks(address: IpAddress, networks: readonly IpNetwork[]): boolean {
  for (const network of networks) {
    if (network.version === 4) {
      if (address.version === 4 && (address.value & network.mask) >>> 0 === network.network) return true;
    } else if (address.version === 6 && isIpv6InNetwork(address.groups, network)) {
      return true;
    }
  }
  return false;
}

function isIpv6InNetwork(
  groups: readonly number[],
  network: { groups: readonly number[]; prefixLength: number },
) {
  for (let index = 0; index * 16 < network.prefixLength; index++) {
    if (((groups[index] ?? 0) & groupMask(network, index)) !== network.groups[index]) return false;
  }
  return true;
}

/**
 * An address in its one canonical text: IPv4 as a dotted quad, IPv6 as RFC 5952 section 4 writes it
 * (lower case, no leading zeros, the longest run of two or more zero groups, the first of equal runs,
 * as "::").
 */
export function formatIpAddress(address: IpAddress): string {
  if (address.version === 4) {
    const value = address.value;
    return `${value >>> 24}.${(value >>> 16) & 255}.${(value >>> 8) & 255}.${value & 255}`;
  }
  const groups = address.groups;
  let runStart = -1;
  let runLength = 1;
  for (let start = 0; start < 8; start++) {
    let end = start;
    while (end < 8 && groups[end] === 0) end++;
    if (end - start > runLength) [runStart, runLength] = [start, end - start];
  }
  const hex = groups.map((group) => group.toString(16));
  if (runStart === -1) return hex.join(":");
  return `${hex.slice(0, runStart).join(":")}::${hex.slice(runStart + runLength).join(":")}`;
}
