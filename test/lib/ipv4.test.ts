import { describe, expect, test } from "bun:test";
import { formatIpv4, hostRange, parseCidr, parseIpv4 } from "../../src/lib/ipv4.ts";

describe("parseIpv4", () => {
  test.each([
    ["0.0.0.0", 0],
    ["10.100.0.1", 0x0a640001],
    ["192.168.1.255", 0xc0a801ff],
    ["255.255.255.255", 0xffffffff],
  ])("parses %s", (text, expected) => {
    expect(parseIpv4(text)).toBe(expected);
  });

  test.each([
    "",
    "1.2.3",
    "1.2.3.4.5",
    "01.2.3.4",
    "1.2.3.00",
    "256.1.1.1",
    "1.1.1.256",
    "1000.1.1.1",
    "-1.1.1.1",
    "+1.1.1.1",
    "1..2.3",
    "1.2.3.4.",
    " 1.2.3.4",
    "1.2.3.4 ",
    "0x1.2.3.4",
    "1.2.3.a",
    "1e2.1.1.1",
    "16843009",
  ])("rejects %p", (text) => {
    expect(parseIpv4(text)).toBeNull();
  });
});

describe("formatIpv4", () => {
  test("formats the extremes and a typical address", () => {
    expect(formatIpv4(0)).toBe("0.0.0.0");
    expect(formatIpv4(0xffffffff)).toBe("255.255.255.255");
    expect(formatIpv4(0x0a640005)).toBe("10.100.0.5");
  });

  test("round-trips with parseIpv4", () => {
    for (const text of ["10.100.0.1", "172.16.254.3", "128.0.0.0", "1.2.3.4"]) {
      expect(formatIpv4(parseIpv4(text) ?? -1)).toBe(text);
    }
  });

  test.each([-1, 2 ** 32, 1.5, Number.NaN])("throws for %p", (value) => {
    expect(() => formatIpv4(value)).toThrow(RangeError);
  });
});

describe("parseCidr", () => {
  test("parses network addresses with their prefix", () => {
    expect(parseCidr("10.100.0.0/16")).toEqual({ network: 0x0a640000, prefixLength: 16 });
    expect(parseCidr("0.0.0.0/0")).toEqual({ network: 0, prefixLength: 0 });
    expect(parseCidr("10.100.0.7/32")).toEqual({ network: 0x0a640007, prefixLength: 32 });
    expect(parseCidr("255.255.255.254/31")).toEqual({ network: 0xfffffffe, prefixLength: 31 });
  });

  test.each([
    "10.100.0.0",
    "10.100.0.0/",
    "10.100.0.0/33",
    "10.100.0.0/-1",
    "10.100.0.0/016",
    "10.100.0.0/1.5",
    "10.100.0.0/16/1",
    "/16",
    "10.100.0/16",
    "010.100.0.0/16",
    "10.100.0.1/24",
    "10.100.0.128/24",
    "1.0.0.0/0",
    "10.100.0.1/31",
  ])("rejects %p", (text) => {
    expect(parseCidr(text)).toBeNull();
  });
});

describe("hostRange", () => {
  function rangeOf(text: string): { first: string; last: string } | "empty" {
    const cidr = parseCidr(text);
    if (cidr === null) throw new Error(`bad test CIDR ${text}`);
    const { first, last } = hostRange(cidr);
    return first > last ? "empty" : { first: formatIpv4(first), last: formatIpv4(last) };
  }

  test("skips the network address, the gateway and the broadcast address", () => {
    expect(rangeOf("10.100.0.0/16")).toEqual({ first: "10.100.0.2", last: "10.100.255.254" });
    expect(rangeOf("10.100.0.0/24")).toEqual({ first: "10.100.0.2", last: "10.100.0.254" });
    expect(rangeOf("192.168.7.8/29")).toEqual({ first: "192.168.7.10", last: "192.168.7.14" });
  });

  test("a /30 leaves exactly one device address", () => {
    expect(rangeOf("10.0.0.4/30")).toEqual({ first: "10.0.0.6", last: "10.0.0.6" });
  });

  test.each(["10.0.0.4/31", "10.0.0.4/32", "0.0.0.0/32", "255.255.255.255/32", "255.255.255.254/31"])(
    "%p has no device addresses",
    (text) => {
      expect(rangeOf(text)).toBe("empty");
    },
  );

  test("the whole address space stays within 32 bits", () => {
    expect(rangeOf("0.0.0.0/0")).toEqual({ first: "0.0.0.2", last: "255.255.255.254" });
    expect(rangeOf("128.0.0.0/1")).toEqual({ first: "128.0.0.2", last: "255.255.255.254" });
  });

  test("an empty range has nothing to iterate", () => {
    const { first, last } = hostRange({ network: 0x0a000004, prefixLength: 31 });
    expect(last - first + 1).toBeLessThanOrEqual(0);
  });
});
