import { withTransaction } from "../../db/client";
import { webhooks } from "../../db/tables";
import { toIso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import { recordAudit } from "../audit/record-audit";
import type { Actor, DomainDeps } from "../deps";
import { assertAllowedTarget, assertSecretLength, normalizeEventFilter, originOf } from "./webhook-input";
import { toWebhookView, type WebhookRow, type WebhookView } from "./webhook-view";

export interface CreateWebhookInput {
  url: string;
  events: string[];
  secret: string;
}

/** Subscribes a url to events of the organization; the url's host must pass the target check. */
export async function createWebhook(
  deps: DomainDeps,
  actor: Actor,
  organizationId: string,
  input: CreateWebhookInput,
): Promise<WebhookView> {
  const events = normalizeEventFilter(input.events);
  assertSecretLength(input.secret);
  await assertAllowedTarget(deps.config, input.url);
  const now = deps.clock.now();
  const timestamp = toIso(now);
  const row: WebhookRow = {
    id: newId(),
    organizationId,
    url: input.url,
    events,
    secret: deps.secrets.seal(input.secret),
    isActive: true,
    disabledReason: null,
    createdAt: timestamp,
    updatedAt: timestamp,
  };
  return await withTransaction(deps.db, async (tx) => {
    await tx.insert(webhooks).values(row);
    await recordAudit(tx, now, actor, {
      action: "webhook.create",
      targetType: "webhook",
      targetId: row.id,
      details: { target: originOf(row.url), events },
    });
    return toWebhookView(row, null);
  });
}
