import { eq } from "drizzle-orm";
import { selectNewestFirstPage } from "../../db/paged-query";
import { webhooks } from "../../db/tables";
import type { DomainDeps } from "../deps";
import {
  findLastDeliveries,
  findWebhook,
  toWebhookView,
  viewWebhook,
  type WebhookView,
} from "./webhook-view";

/** The organization's subscriptions, newest first, each with its last delivery. */
export async function listWebhooks(
  deps: DomainDeps,
  organizationId: string,
  page: { page: number; pageSize: number },
): Promise<{ data: WebhookView[]; total: number }> {
  const filter = eq(webhooks.organizationId, organizationId);
  const { data: rows, total } = await selectNewestFirstPage(deps.db, webhooks, filter, page);
  const lastDeliveries = await findLastDeliveries(
    deps.db,
    rows.map((row) => row.id),
  );
  return { data: rows.map((row) => toWebhookView(row, lastDeliveries.get(row.id) ?? null)), total };
}

/** One subscription of the organization. */
export async function getWebhook(deps: DomainDeps, organizationId: string, id: string): Promise<WebhookView> {
  return await viewWebhook(deps.db, await findWebhook(deps.db, organizationId, id));
}
