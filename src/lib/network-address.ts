import { isIP } from "./ip-version";
import { parseIpv4 as parseDottedQuad } from "./ipv4";

/** The kind of network an IP address belongs to; only "public" is reachable across the internet. */
export type IpAddressClassification =
  | "public"
  | "loopback"
  | "private"
  | "link_local"
  | "unspecified"
  | "multicast"
  | "reserved";

/** Resolves a hostname to every address it has, IPv4 and IPv6. */
export type HostnameLookup = (hostname: string) => Promise<string[]>;

/** Whether a webhook may be sent to private networks, and how hostnames are resolved. */
export interface WebhookTargetOptions {
  allowPrivateTargets: boolean;
  lookup?: HostnameLookup;
}

/** The outcome of checking a webhook url: the parsed url and its addresses, or why it was refused. */
export type WebhookTargetCheck = { ok: true; url: URL; addresses: string[] } | { ok: false; reason: string };

interface AddressRange {
  network: string;
  prefixLength: number;
}

interface ClassifiedRange extends AddressRange {
  classification: IpAddressClassification;
}

/** Checked in order; the first matching range wins, anything unmatched is public. */
const ipv4Ranges: readonly ClassifiedRange[] = [
  { network: "0.0.0.0", prefixLength: 8, classification: "unspecified" },
  { network: "127.0.0.0", prefixLength: 8, classification: "loopback" },
  { network: "10.0.0.0", prefixLength: 8, classification: "private" },
  { network: "172.16.0.0", prefixLength: 12, classification: "private" },
  { network: "192.168.0.0", prefixLength: 16, classification: "private" },
  { network: "100.64.0.0", prefixLength: 10, classification: "private" },
  { network: "169.254.0.0", prefixLength: 16, classification: "link_local" },
  { network: "224.0.0.0", prefixLength: 4, classification: "multicast" },
  { network: "240.0.0.0", prefixLength: 4, classification: "reserved" },
  { network: "192.0.0.0", prefixLength: 24, classification: "reserved" },
  { network: "192.0.2.0", prefixLength: 24, classification: "reserved" },
  { network: "198.18.0.0", prefixLength: 15, classification: "reserved" },
  { network: "198.51.100.0", prefixLength: 24, classification: "reserved" },
  { network: "203.0.113.0", prefixLength: 24, classification: "reserved" },
];

/** IPv6 prefixes whose last 32 bits are an IPv4 address that decides the classification. */
const ipv6RangesEmbeddingIpv4: readonly AddressRange[] = [
  { network: "::ffff:0:0", prefixLength: 96 },
  { network: "::ffff:0:0:0", prefixLength: 96 },
  { network: "64:ff9b::", prefixLength: 96 },
];

/** Checked in order after the embedded-IPv4 forms; anything left outside 2000::/3 is reserved. */
const ipv6Ranges: readonly ClassifiedRange[] = [
  { network: "::", prefixLength: 128, classification: "unspecified" },
  { network: "::1", prefixLength: 128, classification: "loopback" },
  { network: "fc00::", prefixLength: 7, classification: "private" },
  { network: "fe80::", prefixLength: 10, classification: "link_local" },
  { network: "ff00::", prefixLength: 8, classification: "multicast" },
  { network: "64:ff9b:1::", prefixLength: 48, classification: "private" },
  { network: "100::", prefixLength: 64, classification: "reserved" },
  { network: "2001::", prefixLength: 32, classification: "reserved" },
  { network: "2001:db8::", prefixLength: 32, classification: "reserved" },
];

const globalUnicastIpv6: AddressRange = { network: "2000::", prefixLength: 3 };
const sixToFourIpv6: AddressRange = { network: "2002::", prefixLength: 16 };

/**
 * Cloud instance-metadata services (which hand out the machine's credentials) outside link-local:
 * Alibaba Cloud's 100.100.100.200 (private, CGNAT) and AWS's IPv6 endpoint fd00:ec2::254 (private, ULA).
 * The usual 169.254.169.254 is link_local already.
 */
const cloudMetadataIpv4 = ["100.100.100.200"];
const cloudMetadataIpv6 = ["fd00:ec2::254"];

/** Classifies an IPv4 or IPv6 address (IPv6 zone ids allowed); throws a TypeError for anything else. */
export function classifyIpAddress(ip: string): IpAddressClassification {
  const withoutZone = stripZone(ip);
  const version = isIP(withoutZone);
  if (version === 4) {
    return classifyIpv4(parseIpv4(withoutZone));
  }
  if (version === 6) {
    return classifyIpv6(parseIpv6(withoutZone));
  }
  throw new TypeError(`not an IP address: ${ip}`);
}

/** Whether an address is a cloud metadata service's outside link-local (IPv4-mapped forms included). */
export function isCloudMetadataAddress(ip: string): boolean {
  const withoutZone = stripZone(ip);
  const version = isIP(withoutZone);
  if (version === 0) return false;
  const ipv6 = version === 6 ? parseIpv6(withoutZone) : null;
  const ipv4 = ipv6 === null ? parseIpv4(withoutZone) : embeddedIpv4(ipv6);
  if (ipv4 !== null) return cloudMetadataIpv4.some((address) => parseIpv4(address) === ipv4);
  return cloudMetadataIpv6.some((address) => parseIpv6(address) === ipv6);
}

/** Refuses webhook urls that are not plain http(s) or that resolve to a non-public address (unless allowed). */
export async function checkWebhookTarget(
  url: string,
  options: WebhookTargetOptions,
): Promise<WebhookTargetCheck> {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { ok: false, reason: "url is not a valid URL" };
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:") {
    return { ok: false, reason: "url must use http or https" };
  }
  if (parsed.username !== "" || parsed.password !== "") {
    return { ok: false, reason: "url must not contain credentials" };
  }
  const host = stripIpv6Brackets(parsed.hostname);
  if (host === "") {
    return { ok: false, reason: "url must have a host" };
  }

  const addresses = await resolveHostAddresses(host, options.lookup);
  if (addresses.length === 0) {
    return { ok: false, reason: `host ${host} could not be resolved` };
  }
  for (const address of addresses) {
    if (isIP(stripZone(address)) === 0) {
      return { ok: false, reason: `host ${host} resolved to ${address}, which is not an IP address` };
    }
    const classification = classifyIpAddress(address);
    if (classification !== "public" && !options.allowPrivateTargets) {
      return {
        ok: false,
        reason: `target address ${address} is ${classification}; private targets are not allowed (webhooks.allow_private_targets)`,
      };
    }
  }
  return { ok: true, url: parsed, addresses };
}

/**
 * Every address a URL's host stands for: an IP literal (brackets allowed) as itself, a name as the
 * resolver answers it (IPv4 and IPv6), or none when it does not resolve. Check these, then connect only
 * to them (pinned-http.ts): resolving again to connect could give another answer (DNS rebinding).
 */
export async function resolveHostAddresses(
  hostname: string,
  lookup: HostnameLookup = lookupAllAddresses,
): Promise<string[]> {
  const host = stripIpv6Brackets(hostname);
  if (isIP(host) !== 0) return [host];
  try {
    return await lookup(host);
  } catch {
    return [];
  }
}

async function lookupAllAddresses(hostname: string): Promise<string[]> {
  const results = await process
    .getBuiltinModule("node:dns/promises")
    .lookup(hostname, { all: true, order: "verbatim" });
  return results.map((result) => result.address);
}

/** Drops an IPv6 zone id ("fe80::1%eth0"); the zone does not change what kind of address it is. */
function stripZone(ip: string): string {
  return ip.split("%", 1)[0] ?? "";
}

function stripIpv6Brackets(hostname: string): string {
  return hostname.startsWith("[") && hostname.endsWith("]") ? hostname.slice(1, -1) : hostname;
}

function classifyIpv4(address: number): IpAddressClassification {
  for (const range of ipv4Ranges) {
    if (isIpv4InRange(address, range.network, range.prefixLength)) {
      return range.classification;
    }
  }
  return "public";
}

/** The IPv4 address an IPv6 address stands for (IPv4-mapped, NAT64, 6to4, IPv4-compatible), or null. */
function embeddedIpv4(address: bigint): number | null {
  // The deprecated IPv4-compatible form ::a.b.c.d still reaches a.b.c.d on some stacks; :: and ::1 are
  // not it (below 1.0.0.0).
  if (address >> 32n === 0n && address >= 0x01000000n) return Number(address);
  for (const range of ipv6RangesEmbeddingIpv4) {
    if (isIpv6InRange(address, range.network, range.prefixLength)) {
      return Number(address & 0xffffffffn);
    }
  }
  // A 6to4 address (2002:AABB:CCDD::/48) routes to the IPv4 address AA.BB.CC.DD, so that address decides.
  if (isIpv6InRange(address, sixToFourIpv6.network, sixToFourIpv6.prefixLength)) {
    return Number((address >> 80n) & 0xffffffffn);
  }
  return null;
}

function classifyIpv6(address: bigint): IpAddressClassification {
  const ipv4 = embeddedIpv4(address);
  if (ipv4 !== null) {
    return classifyIpv4(ipv4);
  }
  for (const range of ipv6Ranges) {
    if (isIpv6InRange(address, range.network, range.prefixLength)) {
      return range.classification;
    }
  }
  // Outside 2000::/3 nothing is allocated as global unicast (this covers the deprecated ::a.b.c.d and fec0::/10).
  if (!isIpv6InRange(address, globalUnicastIpv6.network, globalUnicastIpv6.prefixLength)) {
    return "reserved";
  }
  return "public";
}

function isIpv4InRange(address: number, network: string, prefixLength: number): boolean {
  const mask = prefixLength === 0 ? 0 : (0xffffffff << (32 - prefixLength)) >>> 0;
  return (address & mask) >>> 0 === (parseIpv4(network) & mask) >>> 0;
}

function isIpv6InRange(address: bigint, network: string, prefixLength: number): boolean {
  const shift = BigInt(128 - prefixLength);
  return address >> shift === parseIpv6(network) >> shift;
}

/** Parses a dotted quad into an unsigned 32-bit number; throws a TypeError for anything else. */
function parseIpv4(ip: string): number {
  const address = parseDottedQuad(ip);
  if (address === null) throw new TypeError(`not an IPv4 address: ${ip}`);
  return address;
}

/** Parses an IPv6 address (with "::" and an optional trailing dotted quad) into a 128-bit number. */
function parseIpv6(ip: string): bigint {
  const groups = ipv6Groups(ip);
  if (!groups) throw new TypeError(`not an IPv6 address: ${ip}`);
  return groups.reduce((value, group) => (value << 16n) | BigInt(group), 0n);
}

/**
 * The eight 16-bit groups of an IPv6 address (with "::" and an optional trailing dotted quad, no zone
 * id), or null for anything else.
 */
export function ipv6Groups(ip: string): number[] | null {
  const halves = ip.split("::");
  if (halves.length > 2) return null;
  const hasCompression = halves.length === 2;
  const head = groupsOf(halves[0] ?? "", !hasCompression);
  const tail = hasCompression ? groupsOf(halves[1] ?? "", true) : [];
  if (!head || !tail) return null;
  const missing = 8 - head.length - tail.length;
  if (hasCompression ? missing < 1 : missing !== 0) return null;
  return [...head, ...new Array<number>(missing).fill(0), ...tail];
}

const HEX_GROUP = /^[0-9a-f]{1,4}$/i;

/** The colon-separated groups on one side of "::"; a dotted quad ending the address counts as two. */
function groupsOf(part: string, endsAddress: boolean): number[] | null {
  if (part === "") return [];
  const groups: number[] = [];
  const pieces = part.split(":");
  for (const [index, piece] of pieces.entries()) {
    if (endsAddress && index === pieces.length - 1 && piece.includes(".")) {
      const embedded = parseDottedQuad(piece);
      if (embedded === null) return null;
      groups.push(embedded >>> 16, embedded & 0xffff);
    } else if (HEX_GROUP.test(piece)) {
      groups.push(Number.parseInt(piece, 16));
    } else {
      return null;
    }
  }
  return groups;
}
