import type { SecretBox } from "../../lib/secret-box";
import { buildWebhookHeaders } from "../../lib/webhook-signature";
import type { ClaimedDelivery } from "./claim-delivery";

/**
 * The body {id, event, timestamp, data} and the headers of one attempt; both signatures cover exactly
 * the body string returned, which must be sent unchanged.
 */
export function buildDeliveryRequest(
  secrets: SecretBox,
  delivery: ClaimedDelivery,
  now: Date,
): { body: string; headers: Record<string, string> } {
  const { event } = delivery;
  const body = JSON.stringify({
    id: event.id,
    event: event.type,
    timestamp: event.createdAt,
    data: event.data,
  });
  const headers = buildWebhookHeaders({
    secret: secrets.open(delivery.secret),
    deliveryId: delivery.id,
    eventId: event.id,
    eventType: event.type,
    timestampSeconds: Math.floor(now.getTime() / 1000),
    body,
  });
  return { body, headers };
}
