import { createCipheriv, createDecipheriv, createHmac, hkdfSync, randomBytes } from "node:crypto";
import { chmodSync, existsSync, linkSync, readFileSync, rmSync, writeFileSync } from "node:fs";

const PREFIX = "sealed:v1:";
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Encrypts and decrypts secrets the service must be able to read back (signing secrets, TOTP seeds). */
export interface SecretBox {
  /** `sealed:v1:` + base64(iv, AES-256-GCM ciphertext, tag). */
  seal(plaintext: string): string;
  /** The plaintext of a sealed value; a value without the prefix is returned as it is (stored before sealing). */
  open(stored: string): string;
  /**
   * A keyed digest (HMAC-SHA256, hex) of a secret the service only compares, never reads back (recovery
   * codes): without the key file, a copied database gives no way to test guesses offline.
   */
  digest(secret: string): string;
}

/** Raised when a sealed value cannot be opened: another key, or a changed value. */
export class SecretBoxError extends Error {}

/** A SecretBox for a 32-byte key. */
export function createSecretBox(key: Uint8Array): SecretBox {
  if (key.byteLength !== KEY_BYTES) throw new SecretBoxError(`the key must be ${KEY_BYTES} bytes`);
  // Its own key for digests, derived from the same file: one key never serves two algorithms.
  const digestKey = Buffer.from(hkdfSync("sha256", key, new Uint8Array(0), "bulwark digest v1", KEY_BYTES));
  return {
    digest(secret) {
      return createHmac("sha256", digestKey).update(secret, "utf8").digest("hex");
    },
    seal(plaintext) {
      const iv = randomBytes(IV_BYTES);
      const cipher = createCipheriv("aes-256-gcm", key, iv);
      const body = Buffer.concat([cipher.update(plaintext, "utf8"), cipher.final()]);
      return PREFIX + Buffer.concat([iv, body, cipher.getAuthTag()]).toString("base64");
    },
    open(stored) {
      if (!stored.startsWith(PREFIX)) return stored;
      const bytes = Buffer.from(stored.slice(PREFIX.length), "base64");
      try {
        const decipher = createDecipheriv("aes-256-gcm", key, bytes.subarray(0, IV_BYTES));
        decipher.setAuthTag(bytes.subarray(bytes.length - TAG_BYTES));
        return Buffer.concat([
          decipher.update(bytes.subarray(IV_BYTES, bytes.length - TAG_BYTES)),
          decipher.final(),
        ]).toString("utf8");
      } catch {
        throw new SecretBoxError(
          "a sealed secret cannot be opened with this key (was the key file replaced?)",
        );
      }
    },
  };
}

/** True when a stored value is sealed. */
export function isSealed(stored: string): boolean {
  return stored.startsWith(PREFIX);
}

/**
 * The key in `path` (base64 of 32 random bytes), created owner-only when missing. It lives beside the
 * database, not in it: a copied database file or a backup alone does not reveal the sealed secrets.
 */
export function loadOrCreateKeyFile(path: string): Uint8Array {
  if (!existsSync(path)) writeNewKeyFile(path, newSecretKey());
  return readKeyFile(path) as Uint8Array;
}

/** A new random key for a key file. */
export function newSecretKey(): Uint8Array {
  return randomBytes(KEY_BYTES);
}

/** Writes `key` to a new key file (0600); fails when the file exists. */
export function writeNewKeyFile(path: string, key: Uint8Array): void {
  writeFileSync(path, `${Buffer.from(key).toString("base64")}\n`, { mode: 0o600, flag: "wx" });
  chmodSync(path, 0o600);
}

/**
 * Writes `key` to `path` unless a key file is there, and answers the key the file holds: `key`, or the
 * one another process put there first. The file is written aside and linked into place, so that a
 * process reading it never finds it half written.
 */
export function claimKeyFile(path: string, key: Uint8Array): Uint8Array {
  const aside = `${path}.${process.pid}.${randomBytes(4).toString("hex")}.new`;
  writeNewKeyFile(aside, key);
  try {
    linkSync(aside, path);
    return key;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
    return readKeyFile(path) as Uint8Array;
  } finally {
    rmSync(aside, { force: true });
  }
}

/** The key in `path`, or null when there is no such file. */
export function readKeyFile(path: string): Uint8Array | null {
  if (!existsSync(path)) return null;
  const key = Buffer.from(readFileSync(path, "utf8").trim(), "base64");
  if (key.byteLength !== KEY_BYTES)
    throw new SecretBoxError(`${path} does not hold a ${KEY_BYTES}-byte key (base64); it may be damaged`);
  return key;
}
