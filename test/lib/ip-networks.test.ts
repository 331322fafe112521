import { describe, expect, test } from "bun:test";
import net from "node:net";
import {
  formatIpAddress,
  type IpAddress,
  isInNetworks,
  parseIpAddress,
  parseIpNetwork,
} from "../../src/lib/ip-networks";

let seed = 29;
function random(): number {
  seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
  return seed / 2_147_483_648;
}

/** Eight groups, zero about half the time so that runs of zero groups of every length occur. */
function randomIpv6Groups(): number[] {
  return Array.from({ length: 8 }, () => (random() < 0.5 ? 0 : Math.floor(random() * 0x10000)));
}

function randomIpv4(): string {
  return Array.from({ length: 4 }, () => Math.floor(random() * 256)).join(".");
}

/** The WHATWG URL serializer's text of an IPv6 address (RFC 5952's, but for IPv4-mapped ones). */
function urlSerialized(text: string): string {
  return new URL(`http://[${text}]/`).hostname.slice(1, -1);
}

/** The text of an address given as its version and its value as one number. */
function textOf(version: 4 | 6, value: bigint): string {
  if (version === 4) return formatIpAddress({ version, value: Number(value) });
  const groups = Array.from({ length: 8 }, (_, index) =>
    Number((value >> BigInt(112 - 16 * index)) & 0xffffn),
  );
  return formatIpAddress({ version, groups });
}

/** An address's value as one number. */
function numberOf(address: IpAddress): bigint {
  if (address.version === 4) return BigInt(address.value);
  return address.groups.reduce((value, group) => (value << 16n) | BigInt(group), 0n);
}

function address(text: string): IpAddress {
  const parsed = parseIpAddress(text);
  if (!parsed) throw new Error(`not an address: ${text}`);
  return parsed;
}

describe("parseIpAddress and formatIpAddress", () => {
  test("IPv6 addresses are written as the URL serializer writes them, for 5,000 spellings", () => {
    for (let index = 0; index < 5_000; index++) {
      const groups = randomIpv6Groups();
      if (groups.slice(0, 5).every((group) => group === 0) && groups[5] === 0xffff) continue;
      // Written in full, upper case, with leading zeros: nothing like the canonical form.
      const text = groups.map((group) => group.toString(16).toUpperCase().padStart(4, "0")).join(":");
      expect([text, formatIpAddress(address(text))]).toEqual([text, urlSerialized(text)]);
    }
  });

  test("IPv4 addresses, and IPv4-mapped IPv6 ones, are dotted quads", () => {
    for (let index = 0; index < 1_000; index++) {
      const text = randomIpv4();
      expect(formatIpAddress(address(text))).toBe(text);
      expect(formatIpAddress(address(`::ffff:${text}`))).toBe(text);
      expect(formatIpAddress(address(`::FFFF:${urlSerialized(`::ffff:${text}`).slice(7)}`))).toBe(text);
    }
  });

  test("anything but a bare address is refused", () => {
    for (const text of [
      "",
      "1.2.3",
      "01.2.3.4",
      "1.2.3.4:80",
      "[::1]",
      "fe80::1%eth0",
      "::1/128",
      "x",
      " 1.2.3.4",
    ])
      expect([text, parseIpAddress(text)]).toEqual([text, null]);
  });
});

describe("parseIpNetwork and isInNetworks", () => {
  test("an address matches a network exactly when node:net's BlockList says so", () => {
    for (let index = 0; index < 300; index++) {
      const isIpv4 = random() < 0.5;
      const bits = isIpv4 ? 32 : 128;
      const prefixLength = Math.floor(random() * (bits + 1));
      // The network of a random address, so that the host bits are clear.
      const base = address(
        isIpv4
          ? randomIpv4()
          : randomIpv6Groups()
              .map((g) => g.toString(16))
              .join(":"),
      );
      const hostBits = (1n << BigInt(bits - prefixLength)) - 1n;
      const networkValue = numberOf(base) & ~hostBits;
      const networkText = textOf(base.version, networkValue);
      const network = parseIpNetwork(`${networkText}/${prefixLength}`);
      if (!network) throw new Error(`refused ${networkText}/${prefixLength}`);
      const list = new net.BlockList();
      list.addSubnet(networkText, prefixLength, isIpv4 ? "ipv4" : "ipv6");
      for (let probe = 0; probe < 20; probe++) {
        // Near the network half the time (its address with a few low bits changed), anywhere otherwise.
        const probeText =
          random() < 0.5
            ? textOf(base.version, networkValue ^ BigInt(Math.floor(random() * 2 ** 12)))
            : isIpv4
              ? randomIpv4()
              : randomIpv6Groups()
                  .map((g) => g.toString(16))
                  .join(":");
        expect([
          probeText,
          `${networkText}/${prefixLength}`,
          isInNetworks(address(probeText), [network]),
        ]).toEqual([
          probeText,
          `${networkText}/${prefixLength}`,
          list.check(probeText, isIpv4 ? "ipv4" : "ipv6"),
        ]);
      }
    }
  });

  test("a single address is a network of one; an IPv4-mapped network is its IPv4 network", () => {
    const networks = (...texts: string[]) => texts.flatMap((text) => parseIpNetwork(text) ?? []);
    expect(parseIpNetwork("10.0.0.5")).toMatchObject({ version: 4, network: 0x0a000005, prefixLength: 32 });
    expect(parseIpNetwork("::ffff:10.0.0.0/104")).toEqual(parseIpNetwork("10.0.0.0/8"));
    expect(isInNetworks(address("::ffff:10.0.0.5"), networks("10.0.0.5"))).toBe(true);
    expect(isInNetworks(address("10.0.0.6"), networks("10.0.0.5"))).toBe(false);
    // IPv4 addresses are not in IPv6 networks, not even ::/0.
    expect(isInNetworks(address("10.0.0.5"), networks("::/0"))).toBe(false);
  });

  test("malformed networks, and networks with bits set beyond the prefix, are refused", () => {
    for (const text of [
      "10.0.0.1/8",
      "10.0.0.0/33",
      "10.0.0.0/08",
      "10.0.0.0/",
      "2001:db8::1/32",
      "::/129",
      "::ffff:10.0.0.0/95",
      "a/8",
      "10.0.0.0/8/8",
    ])
      expect([text, parseIpNetwork(text)]).toEqual([text, null]);
  });
});
