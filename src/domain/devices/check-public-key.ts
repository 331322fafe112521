import { isWireGuardKey } from "../../lib/wireguard";

/**
 * The X25519 points of small order (libsodium's list, little-endian): 0, 1, two points of order 8,
 * p - 1, p and p + 1. A peer key among them makes every shared secret all zeros.
 */
const LOW_ORDER_POINTS = [
  "0000000000000000000000000000000000000000000000000000000000000000",
  "0100000000000000000000000000000000000000000000000000000000000000",
  "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800",
  "5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157",
  "ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
  "edffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
  "eeffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f",
].map((hex) => Buffer.from(hex, "hex"));

/** Tells whether 32 key bytes are a low-order X25519 point; the top bit is ignored, as X25519 does. */
export function isLowOrderPoint(key: Uint8Array): boolean {
  const masked = Buffer.from(key);
  masked[31] = (masked[31] ?? 0) & 0x7f;
  return LOW_ORDER_POINTS.some((point) => point.equals(masked));
}

/** Why a WireGuard public key sent by an agent cannot be used, or undefined when it can. */
export function describePublicKeyProblem(publicKey: string): string | undefined {
  if (!isWireGuardKey(publicKey)) return "must be a WireGuard public key: the base64 of 32 bytes";
  if (isLowOrderPoint(Buffer.from(publicKey, "base64"))) {
    return "must not be a low-order X25519 point (such as all zeros): no secure tunnel can use it";
  }
  return undefined;
}
