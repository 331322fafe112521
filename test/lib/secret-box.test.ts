import { describe, expect, test } from "bun:test";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createSecretBox, isSealed, loadOrCreateKeyFile, SecretBoxError } from "../../src/lib/secret-box";

describe("createSecretBox", () => {
  test("seals to a value that reveals nothing and opens back; each seal differs", () => {
    const box = createSecretBox(randomBytes(32));
    const sealed = box.seal("webhook-secret-0123456789");
    expect(isSealed(sealed)).toBe(true);
    expect(sealed).not.toContain("webhook-secret");
    expect(box.seal("webhook-secret-0123456789")).not.toBe(sealed);
    expect(box.open(sealed)).toBe("webhook-secret-0123456789");
  });

  test("another key or a changed value cannot open it; an unsealed value is read as it is", () => {
    const sealed = createSecretBox(randomBytes(32)).seal("secret");
    expect(() => createSecretBox(randomBytes(32)).open(sealed)).toThrow(SecretBoxError);
    const box = createSecretBox(randomBytes(32));
    const sealed2 = box.seal("secret");
    const at = "sealed:v1:".length + 20;
    const tampered = sealed2.slice(0, at) + (sealed2[at] === "A" ? "B" : "A") + sealed2.slice(at + 1);
    expect(() => box.open(tampered)).toThrow(SecretBoxError);
    expect(box.open("stored-before-sealing")).toBe("stored-before-sealing");
  });
});

describe("loadOrCreateKeyFile", () => {
  test("creates an owner-only key once and reads the same key afterwards; refuses a damaged file", () => {
    const folder = mkdtempSync(join(tmpdir(), "bulwark-key-"));
    const path = join(folder, "bulwark.db.key");
    const first = loadOrCreateKeyFile(path);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(Buffer.from(loadOrCreateKeyFile(path)).equals(Buffer.from(first))).toBe(true);
    expect(readFileSync(path, "utf8").trim()).toHaveLength(44);
    writeFileSync(path, "short");
    expect(() => loadOrCreateKeyFile(path)).toThrow(SecretBoxError);
  });
});
