import { createHash, randomBytes } from "node:crypto";

/** A random secret of `bytes` bytes, base64url, optionally prefixed (`bwk_`). */
export function generateSecret(bytes: number, prefix = ""): string {
  return `${prefix}${randomBytes(bytes).toString("base64url")}`;
}

/** SHA-256 hex of a high-entropy secret (API keys, device and enrollment tokens). */
export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

/** Cost of argon2id: memory in KiB and number of passes. */
export interface PasswordHashCost {
  memoryKib: number;
  iterations: number;
}

/** Hashes a password with argon2id; the cost is stored in the hash, so changing it later is safe. */
export function hashPassword(password: string, cost: PasswordHashCost): Promise<string> {
  return Bun.password.hash(password, {
    algorithm: "argon2id",
    memoryCost: cost.memoryKib,
    timeCost: cost.iterations,
  });
}

export function verifyPassword(password: string, hash: string): Promise<boolean> {
  return Bun.password.verify(password, hash);
}

/** A readable random password for the first-run admin. */
export function generatePassword(): string {
  return randomBytes(18).toString("base64url");
}
