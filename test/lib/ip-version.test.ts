import { describe, expect, test } from "bun:test";
import net from "node:net";
import { isIP } from "../../src/lib/ip-version";

const WRITTEN = [
  "0.0.0.0",
  "127.0.0.1",
  "255.255.255.255",
  "256.1.1.1",
  "01.2.3.4",
  "1.2.3",
  "1.2.3.4.5",
  "1.2.3.4 ",
  "::",
  "::1",
  "fe80::1%eth0",
  "fe80::1%",
  "2001:db8::8a2e:370:7334",
  "2001:0db8:0000:0000:0000:ff00:0042:8329",
  "::ffff:192.0.2.1",
  "::ffff:192.0.2.256",
  "1:2:3:4:5:6:7:8:9",
  "1::2::3",
  "[::1]",
  "example.com",
  "",
];

describe("isIP", () => {
  test("answers as node:net does for written addresses and near misses", () => {
    for (const text of WRITTEN) expect([text, isIP(text)]).toEqual([text, net.isIP(text) as 0 | 4 | 6]);
  });

  test("answers as node:net does for 20,000 strings made of address characters", () => {
    const alphabet = "0123456789abcdefABCDEF:.%g";
    let seed = 17;
    const random = () => {
      seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648;
      return seed / 2_147_483_648;
    };
    const kinds = { 0: 0, 4: 0, 6: 0 };
    for (let round = 0; round < 20_000; round++) {
      // Two thirds built from address-shaped pieces, so that valid ones come up too.
      const text =
        round % 3 === 0
          ? Array.from({ length: 1 + Math.floor(random() * 40) }, () =>
              alphabet.charAt(Math.floor(random() * alphabet.length)),
            ).join("")
          : round % 3 === 1
            ? Array.from(
                { length: 3 + Math.floor(random() * 3) },
                () => (random() < 0.1 ? "0" : "") + String(Math.floor(random() * 300)),
              ).join(".")
            : Array.from({ length: 2 + Math.floor(random() * 8) }, () =>
                random() < 0.2
                  ? String(Math.floor(random() * 300))
                  : Math.floor(random() * 65_536).toString(16),
              ).join(random() < 0.8 ? ":" : random() < 0.5 ? "::" : ".");
      const expected = net.isIP(text) as 0 | 4 | 6;
      kinds[expected]++;
      if (isIP(text) !== expected) expect([text, isIP(text)]).toEqual([text, expected]);
    }
    // The corpus reached every answer, or the comparison above proves little.
    expect(kinds[4]).toBeGreaterThan(500);
    expect(kinds[6]).toBeGreaterThan(500);
  });
});
