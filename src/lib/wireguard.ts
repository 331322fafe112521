import { createPrivateKey, createPublicKey, generateKeyPairSync } from "node:crypto";

/** A WireGuard key pair, each key the base64 of its 32 raw bytes as `wg genkey` and `wg pubkey` print it. */
export interface WireGuardKeyPair {
  privateKey: string;
  publicKey: string;
}

const KEY_BYTES = 32;
const CANONICAL_KEY = /^[A-Za-z0-9+/]{43}=$/;
// ASN.1 header of a PKCS8 PrivateKeyInfo for an X25519 key (OID 1.3.101.110); the 32 raw bytes follow.
const X25519_PKCS8_PREFIX = Buffer.from("302e020100300506032b656e04220420", "hex");

/** Generates a fresh X25519 key pair for a WireGuard peer. */
export function generateWireGuardKeyPair(): WireGuardKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync("x25519");
  const rawPrivateKey = Buffer.from(requireJwkField(privateKey.export({ format: "jwk" }).d), "base64url");
  // BoringSSL (Bun) deliberately leaves private keys unclamped; `wg genkey` clamps them. X25519 clamps
  // before multiplying, so clamping here changes only the stored bytes, never the public key.
  clampPrivateKey(rawPrivateKey);
  return {
    privateKey: rawPrivateKey.toString("base64"),
    publicKey: jwkToBase64(publicKey.export({ format: "jwk" }).x),
  };
}

/** Tells whether a value is a WireGuard key: canonical base64 of exactly 32 bytes. */
export function isWireGuardKey(value: string): boolean {
  if (!CANONICAL_KEY.test(value)) return false;
  const bytes = Buffer.from(value, "base64");
  // Re-encoding rejects non-canonical spellings whose unused low bits are not zero.
  return bytes.length === KEY_BYTES && bytes.toString("base64") === value;
}

/** Derives the public key of a WireGuard private key, as `wg pubkey` does; throws on a malformed key. */
export function wireGuardPublicKeyOf(privateKeyBase64: string): string {
  if (!isWireGuardKey(privateKeyBase64)) {
    throw new TypeError("not a WireGuard key: expected the base64 of 32 bytes");
  }
  const privateKey = createPrivateKey({
    key: Buffer.concat([X25519_PKCS8_PREFIX, Buffer.from(privateKeyBase64, "base64")]),
    format: "der",
    type: "pkcs8",
  });
  return jwkToBase64(createPublicKey(privateKey).export({ format: "jwk" }).x);
}

function clampPrivateKey(bytes: Buffer): void {
  bytes[0] = (bytes[0] ?? 0) & 248;
  bytes[31] = ((bytes[31] ?? 0) & 127) | 64;
}

function jwkToBase64(field: string | undefined): string {
  return Buffer.from(requireJwkField(field), "base64url").toString("base64");
}

function requireJwkField(field: string | undefined): string {
  if (field === undefined) throw new Error("X25519 key export lacks its key material");
  return field;
}
