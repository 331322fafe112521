import { createHmac } from "node:crypto";

/**
 * RFC 6238 TOTP (HMAC-SHA-1, 6 digits, 30 s steps) in a few lines of node:crypto: an implementation
 * independent of the otplib the server uses, so that tests compute codes as a phone app would.
 */
export function totpCode(base32Secret: string, at: Date, stepOffset = 0): string {
  const step = Math.floor(at.getTime() / 1000 / 30) + stepOffset;
  return hotp(base32Decode(base32Secret), step, 6);
}

export function hotp(key: Buffer, counter: number, digits: number, algorithm = "sha1"): string {
  const message = Buffer.alloc(8);
  message.writeBigUInt64BE(BigInt(counter));
  const digest = createHmac(algorithm, key).update(message).digest();
  const offset = (digest[digest.length - 1] as number) & 0x0f;
  const binary = digest.readUInt32BE(offset) & 0x7fffffff;
  return String(binary % 10 ** digits).padStart(digits, "0");
}

export function base32Decode(text: string): Buffer {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
  let bits = "";
  for (const character of text.replace(/=+$/, "").toUpperCase()) {
    const value = alphabet.indexOf(character);
    if (value < 0) throw new Error(`not base32: ${character}`);
    bits += value.toString(2).padStart(5, "0");
  }
  const bytes = bits.match(/.{8}/g) ?? [];
  return Buffer.from(bytes.map((byte) => Number.parseInt(byte, 2)));
}
