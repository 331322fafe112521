import { describe, expect, test } from "bun:test";
import { createPrivateKey, createPublicKey } from "node:crypto";
import { generateWireGuardKeyPair, isWireGuardKey, wireGuardPublicKeyOf } from "../../src/lib/wireguard.ts";

// Derives the public key without the module under test: PKCS8 DER header + the 32 raw private-key bytes.
function derivePublicKeyIndependently(privateKeyBase64: string): string {
  const der = Buffer.concat([
    Buffer.from("302e020100300506032b656e04220420", "hex"),
    Buffer.from(privateKeyBase64, "base64"),
  ]);
  const spki = createPublicKey(createPrivateKey({ key: der, format: "der", type: "pkcs8" })).export({
    format: "der",
    type: "spki",
  });
  return spki.subarray(spki.length - 32).toString("base64");
}

function hexToBase64(hex: string): string {
  return Buffer.from(hex, "hex").toString("base64");
}

const ZERO_KEY = `${"A".repeat(43)}=`;

describe("generateWireGuardKeyPair", () => {
  test("writes both keys as the 44-character base64 of 32 bytes", () => {
    const { privateKey, publicKey } = generateWireGuardKeyPair();
    for (const key of [privateKey, publicKey]) {
      expect(key).toMatch(/^[A-Za-z0-9+/]{43}=$/);
      expect(Buffer.from(key, "base64")).toHaveLength(32);
      expect(isWireGuardKey(key)).toBe(true);
    }
  });

  test("the public key belongs to the private key", () => {
    for (let attempt = 0; attempt < 20; attempt++) {
      const { privateKey, publicKey } = generateWireGuardKeyPair();
      expect(publicKey).toBe(derivePublicKeyIndependently(privateKey));
    }
  });

  test("the private key is clamped as `wg genkey` writes it", () => {
    for (let attempt = 0; attempt < 20; attempt++) {
      const bytes = Buffer.from(generateWireGuardKeyPair().privateKey, "base64");
      expect((bytes[0] ?? 0) & 7).toBe(0);
      expect((bytes[31] ?? 0) & 192).toBe(64);
    }
  });

  test("every pair is fresh", () => {
    const pairs = Array.from({ length: 50 }, () => generateWireGuardKeyPair());
    expect(new Set(pairs.map((pair) => pair.privateKey)).size).toBe(50);
    expect(new Set(pairs.map((pair) => pair.publicKey)).size).toBe(50);
    for (const pair of pairs) expect(pair.publicKey).not.toBe(pair.privateKey);
  });
});

describe("wireGuardPublicKeyOf", () => {
  test("matches the RFC 7748 test vectors", () => {
    expect(
      wireGuardPublicKeyOf(hexToBase64("77076d0a7318a57d3c16c17251b26645df4c2f87ebc0992ab177fba51db92c2a")),
    ).toBe(hexToBase64("8520f0098930a754748b7ddcb43ef75a0dbf3a0d26381af4eba4a98eaa9b4e6a"));
    expect(
      wireGuardPublicKeyOf(hexToBase64("5dab087e624a8a4b79e17f8b83800ee66f3bb1292618b6fd1c2f8b27ff88e0eb")),
    ).toBe(hexToBase64("de9edb7d7b7dc1b4d35b61c2ece435373f8343c85b78674dadfc7e146f882b4f"));
  });

  test("agrees with the generated pair and with an independent derivation", () => {
    const { privateKey, publicKey } = generateWireGuardKeyPair();
    expect(wireGuardPublicKeyOf(privateKey)).toBe(publicKey);
    expect(wireGuardPublicKeyOf(privateKey)).toBe(derivePublicKeyIndependently(privateKey));
  });

  test("rejects a malformed private key", () => {
    expect(() => wireGuardPublicKeyOf("not a key")).toThrow(TypeError);
    expect(() => wireGuardPublicKeyOf(ZERO_KEY.slice(1))).toThrow(TypeError);
  });
});

describe("isWireGuardKey", () => {
  test("accepts canonical 32-byte base64", () => {
    expect(isWireGuardKey(ZERO_KEY)).toBe(true);
    expect(isWireGuardKey(hexToBase64("ff".repeat(32)))).toBe(true);
  });

  test.each([
    ["empty", ""],
    ["too short", `${"A".repeat(42)}=`],
    ["31 bytes", Buffer.alloc(31).toString("base64")],
    ["33 bytes", Buffer.alloc(33).toString("base64")],
    ["no padding", "A".repeat(43)],
    ["base64url alphabet", `${"_".repeat(42)}A=`],
    ["non-canonical trailing bits", `${"A".repeat(42)}B=`],
    ["whitespace", ` ${ZERO_KEY}`],
    ["trailing newline", `${ZERO_KEY}\n`],
  ])("rejects %s", (_description, value) => {
    expect(isWireGuardKey(value)).toBe(false);
  });
});
