import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { createWebhook } from "../../domain/webhooks/create-webhook";
import { deleteWebhook } from "../../domain/webhooks/delete-webhook";
import { listDeliveries } from "../../domain/webhooks/list-deliveries";
import { getWebhook, listWebhooks } from "../../domain/webhooks/list-webhooks";
import { sendTestEvent } from "../../domain/webhooks/send-test-event";
import { updateWebhook } from "../../domain/webhooks/update-webhook";
import type { AppDeps } from "../app-deps";
import type { securityPlugin } from "../plugins/security";
import { errorResponses, IdParams, PageQuery, Paginated, pageOf, paginate } from "../schemas/common";
import {
  CreateWebhookBody,
  DeliveryQuery,
  DeliverySchema,
  TestEventSchema,
  UpdateWebhookBody,
  WebhookSchema,
} from "./webhooks.schemas";

const SIGNATURE_HELP =
  "Each delivery is a POST of {id, event, timestamp, data} signed with the secret: X-Service-Signature " +
  "(sha256=<hex HMAC-SHA256 of the raw body>) and the Standard Webhooks headers webhook-id, " +
  "webhook-timestamp, webhook-signature. X-Service-Delivery (= webhook-id) stays the same on every retry.";

/** /api/v1/webhooks: signed event subscriptions and their delivery log (admin scope). */
export function webhookRoutes(deps: AppDeps, security: ReturnType<typeof securityPlugin>) {
  return new Elysia({ prefix: "/api/v1/webhooks", tags: ["Webhooks"] })
    .use(security)
    .get(
      "",
      async ({ query, principal }) => {
        const page = pageOf(query);
        return paginate(await listWebhooks(deps, principal.organizationId, page), page);
      },
      {
        access: "admin",
        query: Type.Object(PageQuery),
        response: { 200: Paginated(WebhookSchema), ...errorResponses(400, 401, 403, 429) },
        detail: {
          summary: "List webhook subscriptions",
          description: "Newest first, each with its last delivery.",
        },
      },
    )
    .post(
      "",
      async ({ body, principal, actor, set }) => {
        const webhook = await createWebhook(deps, actor, principal.organizationId, body);
        set.status = 201;
        return webhook;
      },
      {
        access: "admin",
        body: CreateWebhookBody,
        response: { 201: WebhookSchema, ...errorResponses(400, 401, 403, 429) },
        detail: {
          summary: "Subscribe a url to events",
          description: `400 for an unknown event name, a secret under 16 characters, or a url that is not http(s) or whose host resolves to a loopback, private or link-local address (unless webhooks.allow_private_targets). ${SIGNATURE_HELP}`,
        },
      },
    )
    .get(
      "/:id",
      async ({ params, principal }) => await getWebhook(deps, principal.organizationId, params.id),
      {
        access: "admin",
        params: IdParams,
        response: { 200: WebhookSchema, ...errorResponses(401, 403, 404, 429) },
        detail: { summary: "Get a webhook subscription" },
      },
    )
    .patch(
      "/:id",
      ({ params, body, principal, actor }) =>
        updateWebhook(deps, actor, principal.organizationId, params.id, body),
      {
        access: "admin",
        params: IdParams,
        body: UpdateWebhookBody,
        response: { 200: WebhookSchema, ...errorResponses(400, 401, 403, 404, 429) },
        detail: {
          summary: "Change a subscription's url, events, secret or active flag",
          description:
            "While inactive a subscription receives no new events and its pending deliveries wait; active: true resumes them in order.",
        },
      },
    )
    .delete(
      "/:id",
      async ({ params, principal, actor, set }) => {
        await deleteWebhook(deps, actor, principal.organizationId, params.id);
        set.status = 204;
      },
      {
        access: "admin",
        params: IdParams,
        response: { 204: Type.Void({ description: "Deleted" }), ...errorResponses(401, 403, 404, 429) },
        detail: {
          summary: "Delete a webhook subscription",
          description: "Its delivery log goes with it; pending deliveries are not sent.",
        },
      },
    )
    .get(
      "/:id/deliveries",
      async ({ params, query, principal }) => {
        const page = pageOf(query);
        const result = await listDeliveries(
          deps,
          principal.organizationId,
          params.id,
          { status: query.status },
          page,
        );
        return paginate(result, page);
      },
      {
        access: "admin",
        params: IdParams,
        query: DeliveryQuery,
        response: { 200: Paginated(DeliverySchema), ...errorResponses(400, 401, 403, 404, 429) },
        detail: {
          summary: "List a subscription's deliveries with their attempts",
          description: "Newest event first. Kept for webhooks.retention_days once succeeded or failed.",
        },
      },
    )
    .post(
      "/:id/test",
      async ({ params, principal, actor, set }) => {
        const sent = await sendTestEvent(deps, actor, principal.organizationId, params.id);
        set.status = 202;
        return { event_id: sent.eventId, delivery_id: sent.deliveryId };
      },
      {
        access: "admin",
        params: IdParams,
        response: { 202: TestEventSchema, ...errorResponses(401, 403, 404, 409, 429) },
        detail: {
          summary: "Send a webhook.test event to this subscription",
          description:
            "Queued at once for this subscription only, whatever its event filter; follow it in the deliveries list. 409 if the subscription is disabled.",
        },
      },
    );
}
