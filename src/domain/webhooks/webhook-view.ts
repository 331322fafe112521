import { type Static, Type } from "@sinclair/typebox";
import { and, eq, inArray, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { DELIVERY_STATUSES } from "../../db/schema/enums";
import { webhookDeliveries, webhookDeliveryAttempts, webhooks } from "../../db/tables";
import { literalUnion } from "../../lib/literal-union";
import { Timestamp, Uuid } from "../../lib/schema-types";
import { NotFoundError } from "../errors";

export type WebhookRow = typeof webhooks.$inferSelect;
export type DeliveryStatus = (typeof webhookDeliveries.$inferSelect)["status"];

/** Where a delivery stands. */
export const DeliveryStatusSchema = literalUnion(DELIVERY_STATUSES, {
  description:
    "pending: not sent yet or waiting for a retry; succeeded: a 2xx; failed: retries used up or 410",
});

/** A webhook subscription as the API shows it; the secret is never part of it. */
export const WebhookSchema = Type.Object(
  {
    id: Uuid,
    url: Type.String(),
    events: Type.Array(Type.String()),
    active: Type.Boolean({ description: "Inactive subscriptions receive no new events and send nothing" }),
    disabled_reason: Type.Union([Type.String(), Type.Null()], {
      description: "Why the service disabled the subscription (a 410 Gone answer), else null",
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
    last_delivery: Type.Union(
      [
        Type.Object({
          status: DeliveryStatusSchema,
          status_code: Type.Union([Type.Integer(), Type.Null()], {
            description: "HTTP status of the last attempt; null for a timeout or network error",
          }),
          attempted_at: Timestamp,
        }),
        Type.Null(),
      ],
      { description: "The most recent delivery attempt, null before the first" },
    ),
  },
  { title: "Webhook" },
);

export type WebhookView = Static<typeof WebhookSchema>;
/** The most recent attempt of any of a subscription's deliveries. */
export type LastDeliveryView = NonNullable<WebhookView["last_delivery"]>;

/** Shapes a subscription row for the API. */
export function toWebhookView(row: WebhookRow, lastDelivery: LastDeliveryView | null): WebhookView {
  return {
    id: row.id,
    url: row.url,
    events: row.events,
    active: row.isActive,
    disabled_reason: row.disabledReason,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    last_delivery: lastDelivery,
  };
}

/** The organization's subscription with this id; another organization's is not found. */
export async function findWebhook(db: DbOrTx, organizationId: string, id: string): Promise<WebhookRow> {
  const row = await firstRow(
    db
      .select()
      .from(webhooks)
      .where(and(eq(webhooks.id, id), eq(webhooks.organizationId, organizationId))),
  );
  if (!row) throw new NotFoundError("webhook");
  return row;
}

/** The latest attempt of each given subscription, in one query. */
export async function findLastDeliveries(
  db: DbOrTx,
  webhookIds: string[],
): Promise<Map<string, LastDeliveryView>> {
  if (webhookIds.length === 0) return new Map();
  // Attempt ids are time-ordered UUIDs, so they break ties between attempts started in the same instant.
  const ranked = db
    .select({
      webhookId: webhookDeliveries.webhookId,
      status: webhookDeliveries.status,
      statusCode: webhookDeliveryAttempts.statusCode,
      startedAt: webhookDeliveryAttempts.startedAt,
      rank: sql<number>`row_number() over (partition by ${webhookDeliveries.webhookId} order by ${webhookDeliveryAttempts.startedAt} desc, ${webhookDeliveryAttempts.id} desc)`
        .mapWith(Number)
        .as("rank"),
    })
    .from(webhookDeliveryAttempts)
    .innerJoin(webhookDeliveries, eq(webhookDeliveries.id, webhookDeliveryAttempts.deliveryId))
    .where(inArray(webhookDeliveries.webhookId, webhookIds))
    .as("ranked");
  const rows = await db.select().from(ranked).where(eq(ranked.rank, 1));
  return new Map(
    rows.map((row) => [
      row.webhookId,
      { status: row.status, status_code: row.statusCode, attempted_at: row.startedAt },
    ]),
  );
}

/** A subscription as the API shows it, with its last delivery. */
export async function viewWebhook(db: DbOrTx, row: WebhookRow): Promise<WebhookView> {
  return toWebhookView(row, (await findLastDeliveries(db, [row.id])).get(row.id) ?? null);
}
