import { and, eq, inArray, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { webhookDeliveries, webhookDeliveryAttempts, webhooks } from "../../db/schema";
import { NotFoundError } from "../errors";

export type WebhookRow = typeof webhooks.$inferSelect;
export type DeliveryStatus = (typeof webhookDeliveries.$inferSelect)["status"];

/** The most recent attempt of any of a subscription's deliveries. */
export interface LastDeliveryView {
  status: DeliveryStatus;
  status_code: number | null;
  attempted_at: string;
}

/** A webhook subscription as the API shows it; the secret is never part of it. */
export interface WebhookView {
  id: string;
  url: string;
  events: string[];
  active: boolean;
  disabled_reason: string | null;
  created_at: string;
  updated_at: string;
  last_delivery: LastDeliveryView | null;
}

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
export function findWebhook(db: DbOrTx, organizationId: string, id: string): WebhookRow {
  const row = db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.id, id), eq(webhooks.organizationId, organizationId)))
    .get();
  if (!row) throw new NotFoundError("webhook");
  return row;
}

/** The latest attempt of each given subscription, in one query. */
export function findLastDeliveries(db: DbOrTx, webhookIds: string[]): Map<string, LastDeliveryView> {
  if (webhookIds.length === 0) return new Map();
  // Attempt ids are time-ordered UUIDs, so they break ties between attempts started in the same instant.
  const ranked = db
    .select({
      webhookId: webhookDeliveries.webhookId,
      status: webhookDeliveries.status,
      statusCode: webhookDeliveryAttempts.statusCode,
      startedAt: webhookDeliveryAttempts.startedAt,
      rank: sql<number>`row_number() over (partition by ${webhookDeliveries.webhookId} order by ${webhookDeliveryAttempts.startedAt} desc, ${webhookDeliveryAttempts.id} desc)`.as(
        "rank",
      ),
    })
    .from(webhookDeliveryAttempts)
    .innerJoin(webhookDeliveries, eq(webhookDeliveries.id, webhookDeliveryAttempts.deliveryId))
    .where(inArray(webhookDeliveries.webhookId, webhookIds))
    .as("ranked");
  const rows = db.select().from(ranked).where(eq(ranked.rank, 1)).all();
  return new Map(
    rows.map((row) => [
      row.webhookId,
      { status: row.status, status_code: row.statusCode, attempted_at: row.startedAt },
    ]),
  );
}

/** A subscription as the API shows it, with its last delivery. */
export function viewWebhook(db: DbOrTx, row: WebhookRow): WebhookView {
  return toWebhookView(row, findLastDeliveries(db, [row.id]).get(row.id) ?? null);
}
