import { describe, expect, test } from "bun:test";
import { verify as verifyGithubSignature } from "@octokit/webhooks-methods";
import { Webhook } from "standardwebhooks";
import {
  buildWebhookHeaders,
  signSha256Hex,
  signStandardWebhook,
  timingSafeEqualStrings,
} from "../../src/lib/webhook-signature.ts";

const secret = "whsec-test-secret-0123456789";
const body = JSON.stringify({
  id: "0b6f3c1e-7f0a-4a8e-9d57-1c2b3a4d5e6f",
  event: "device.enrolled",
  timestamp: "2025-01-01T00:00:00.000Z",
  data: { device_id: "4f1c2d3e-0000-4000-8000-000000000001", device_name: "Zoë's laptop", platform: "macos" },
});

function nowInSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

function headersFor(
  overrides: Partial<Parameters<typeof buildWebhookHeaders>[0]> = {},
): Record<string, string> {
  return buildWebhookHeaders({
    secret,
    deliveryId: "delivery-1",
    eventId: "event-1",
    eventType: "device.enrolled",
    timestampSeconds: nowInSeconds(),
    body,
    ...overrides,
  });
}

/** Standard Webhooks keys a raw-format string secret with one byte per UTF-16 code unit, not UTF-8. */
function standardWebhookVerifier(key: string): Webhook {
  return new Webhook(new TextEncoder().encode(key), { format: "raw" });
}

describe("signSha256Hex", () => {
  test("matches a known HMAC-SHA256 test vector", () => {
    // RFC 4231 test case 2.
    expect(signSha256Hex("Jefe", "what do ya want for nothing?")).toBe(
      "sha256=5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843",
    );
  });

  test("is verified by @octokit/webhooks-methods", async () => {
    expect(await verifyGithubSignature(secret, body, signSha256Hex(secret, body))).toBe(true);
  });

  test("signs bytes and the equivalent string identically", () => {
    expect(signSha256Hex(secret, new TextEncoder().encode(body))).toBe(signSha256Hex(secret, body));
  });

  test("fails verification for a tampered body or another secret", async () => {
    const signature = signSha256Hex(secret, body);
    expect(await verifyGithubSignature(secret, body.replace("macos", "linux"), signature)).toBe(false);
    expect(await verifyGithubSignature("another-secret-of-length", body, signature)).toBe(false);
  });
});

describe("signStandardWebhook", () => {
  test("is verified by standardwebhooks with the secret as raw UTF-8 bytes", () => {
    const timestampSeconds = nowInSeconds();
    const signature = signStandardWebhook(secret, "message-1", timestampSeconds, body);
    expect(signature).toStartWith("v1,");
    const headers = {
      "webhook-id": "message-1",
      "webhook-timestamp": String(timestampSeconds),
      "webhook-signature": signature,
    };
    expect(standardWebhookVerifier(secret).verify(body, headers)).toEqual(JSON.parse(body));
    // For an ASCII secret the library's own string handling gives the same key.
    expect(new Webhook(secret, { format: "raw" }).verify(body, headers)).toEqual(JSON.parse(body));
  });

  test("keys a non-ASCII secret with its UTF-8 bytes", () => {
    const unicodeSecret = "sécret-clé-🔑-0123456789";
    const timestampSeconds = nowInSeconds();
    const headers = {
      "webhook-id": "message-2",
      "webhook-timestamp": String(timestampSeconds),
      "webhook-signature": signStandardWebhook(unicodeSecret, "message-2", timestampSeconds, body),
    };
    expect(standardWebhookVerifier(unicodeSecret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  test("rejects a timestamp that is not a whole number of seconds", () => {
    expect(() => signStandardWebhook(secret, "message-1", 1.5, body)).toThrow(RangeError);
  });
});

describe("buildWebhookHeaders", () => {
  test("carries identifiers, content type and both signature schemes", () => {
    const timestampSeconds = nowInSeconds();
    const headers = headersFor({ timestampSeconds });
    expect(headers).toEqual({
      "content-type": "application/json",
      "user-agent": "Bulwark-Webhooks/1",
      "X-Service-Signature": signSha256Hex(secret, body),
      "X-Service-Event": "device.enrolled",
      "X-Service-Event-Id": "event-1",
      "X-Service-Delivery": "delivery-1",
      "webhook-id": "delivery-1",
      "webhook-timestamp": String(timestampSeconds),
      "webhook-signature": signStandardWebhook(secret, "delivery-1", timestampSeconds, body),
    });
  });

  test("both signatures verify with the independent libraries", async () => {
    const headers = headersFor();
    expect(await verifyGithubSignature(secret, body, headers["X-Service-Signature"] ?? "")).toBe(true);
    expect(standardWebhookVerifier(secret).verify(body, headers)).toEqual(JSON.parse(body));
  });

  test("both signatures fail for a tampered body", async () => {
    const headers = headersFor();
    const tampered = body.replace("device.enrolled", "device.wiped");
    expect(await verifyGithubSignature(secret, tampered, headers["X-Service-Signature"] ?? "")).toBe(false);
    expect(() => standardWebhookVerifier(secret).verify(tampered, headers)).toThrow(
      "No matching signature found",
    );
  });

  test("a replayed old timestamp is rejected by standardwebhooks", () => {
    const headers = headersFor({ timestampSeconds: nowInSeconds() - 3600 });
    expect(() => standardWebhookVerifier(secret).verify(body, headers)).toThrow("Message timestamp too old");
  });

  test("the delivery id, not the event id, is what webhook-id signs", () => {
    const headers = headersFor();
    const forged = { ...headers, "webhook-id": "event-1" };
    expect(() => standardWebhookVerifier(secret).verify(body, forged)).toThrow("No matching signature found");
  });
});

describe("timingSafeEqualStrings", () => {
  test("compares equal, different and differently sized strings", () => {
    expect(timingSafeEqualStrings("sha256=abc", "sha256=abc")).toBe(true);
    expect(timingSafeEqualStrings("sha256=abc", "sha256=abd")).toBe(false);
    expect(timingSafeEqualStrings("sha256=abc", "sha256=abcd")).toBe(false);
    expect(timingSafeEqualStrings("", "")).toBe(true);
    expect(timingSafeEqualStrings("é", "e\u0301")).toBe(false);
  });
});
