import { Type } from "@sinclair/typebox";
import { EVENT_TYPES } from "../../domain/events/event-types";
import { DeliverySchema } from "../../domain/webhooks/list-deliveries";
import { MAX_SECRET_LENGTH, MIN_SECRET_LENGTH } from "../../domain/webhooks/webhook-input";
import { DeliveryStatusSchema, WebhookSchema } from "../../domain/webhooks/webhook-view";
import { PageQuery, Uuid } from "../schemas/common";

const DeliveryStatus = DeliveryStatusSchema;

const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description:
    "http(s) url receiving the POSTs. Its host must resolve to public addresses unless webhooks.allow_private_targets is set",
});

const Events = Type.Array(Type.String({ minLength: 1, maxLength: 100 }), {
  minItems: 1,
  maxItems: 50,
  description: `Event names to receive, or ["*"] for all: ${EVENT_TYPES.join(", ")}`,
});

const Secret = Type.String({
  minLength: MIN_SECRET_LENGTH,
  maxLength: MAX_SECRET_LENGTH,
  description: "Shared signing secret (write-only, never returned)",
});

export { WebhookSchema };

export const CreateWebhookBody = Type.Object({ url: Url, events: Events, secret: Secret });

export const UpdateWebhookBody = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(Events),
    secret: Type.Optional(Secret),
    active: Type.Optional(
      Type.Boolean({ description: "true re-enables a disabled subscription; its pending deliveries resume" }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

export { DeliverySchema };

export const DeliveryQuery = Type.Object({ ...PageQuery, status: Type.Optional(DeliveryStatus) });

export const TestEventSchema = Type.Object(
  {
    event_id: Uuid,
    delivery_id: Uuid,
  },
  { title: "WebhookTestResult" },
);
