import { createHmac, timingSafeEqual } from "node:crypto";

/** What a webhook delivery needs to carry its identifying and signature headers. */
export interface WebhookHeaderInput {
  secret: string;
  deliveryId: string;
  eventId: string;
  eventType: string;
  timestampSeconds: number;
  body: string;
}

/** Signs the exact body bytes the GitHub way: `sha256=<hex HMAC-SHA256>`, keyed with the secret's UTF-8 bytes. */
export function signSha256Hex(secret: string, body: string | Uint8Array): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

/** Signs `${messageId}.${timestampSeconds}.${body}` the Standard Webhooks way: `v1,<base64 HMAC-SHA256>`. */
export function signStandardWebhook(
  secret: string,
  messageId: string,
  timestampSeconds: number,
  body: string,
): string {
  // Receivers parse webhook-timestamp as an integer and sign with that, so a fraction could never verify.
  if (!Number.isSafeInteger(timestampSeconds)) {
    throw new RangeError(`timestampSeconds must be a whole number of seconds, got ${timestampSeconds}`);
  }
  const signedContent = `${messageId}.${timestampSeconds}.${body}`;
  return `v1,${createHmac("sha256", secret).update(signedContent).digest("base64")}`;
}

/** Builds every header of one delivery attempt: content type, both signature schemes and the identifiers. */
export function buildWebhookHeaders(input: WebhookHeaderInput): Record<string, string> {
  const { secret, deliveryId, eventId, eventType, timestampSeconds, body } = input;
  return {
    "content-type": "application/json",
    "user-agent": "Bulwark-Webhooks/1",
    "X-Service-Signature": signSha256Hex(secret, body),
    "X-Service-Event": eventType,
    "X-Service-Event-Id": eventId,
    "X-Service-Delivery": deliveryId,
    "webhook-id": deliveryId,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": signStandardWebhook(secret, deliveryId, timestampSeconds, body),
  };
}

/** Compares two strings in time independent of where they differ (only a length mismatch returns early). */
export function timingSafeEqualStrings(a: string, b: string): boolean {
  const aBytes = Buffer.from(a, "utf8");
  const bBytes = Buffer.from(b, "utf8");
  if (aBytes.length !== bBytes.length) {
    return false;
  }
  return timingSafeEqual(aBytes, bBytes);
}
