import { eq } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { webhooks } from "../../db/tables";
import { toIso } from "../../lib/clock";
import { recordAudit } from "../audit/record-audit";
import type { Actor, DomainDeps } from "../deps";
import { assertAllowedTarget, assertSecretLength, normalizeEventFilter, originOf } from "./webhook-input";
import { findWebhook, viewWebhook, type WebhookView } from "./webhook-view";

export interface UpdateWebhookInput {
  url?: string;
  events?: string[];
  secret?: string;
  active?: boolean;
}

/**
 * Changes a subscription's url, events, secret or active flag. Setting active to true re-enables a
 * subscription (clearing why it was disabled); its deliveries still pending resume in order.
 */
export async function updateWebhook(
  deps: DomainDeps,
  actor: Actor,
  organizationId: string,
  id: string,
  input: UpdateWebhookInput,
): Promise<WebhookView> {
  await findWebhook(deps.db, organizationId, id);
  const events = input.events === undefined ? undefined : normalizeEventFilter(input.events);
  if (input.secret !== undefined) assertSecretLength(input.secret);
  if (input.url !== undefined) await assertAllowedTarget(deps.config, input.url);
  const now = deps.clock.now();
  return await withTransaction(deps.db, async (tx) => {
    const row = await findWebhook(tx, organizationId, id);
    const next = {
      url: input.url ?? row.url,
      events: events ?? row.events,
      secret: input.secret === undefined ? row.secret : deps.secrets.seal(input.secret),
      isActive: input.active ?? row.isActive,
      disabledReason: input.active === undefined ? row.disabledReason : null,
      updatedAt: toIso(now),
    };
    await tx.update(webhooks).set(next).where(eq(webhooks.id, id));
    const changes: Record<string, unknown> = {};
    if (input.url !== undefined) changes.target = originOf(input.url);
    if (events !== undefined) changes.events = events;
    if (input.secret !== undefined) changes.secret_changed = true;
    if (input.active !== undefined) changes.active = input.active;
    await recordAudit(tx, now, actor, {
      action: "webhook.update",
      targetType: "webhook",
      targetId: id,
      details: changes,
    });
    return await viewWebhook(tx, { ...row, ...next });
  });
}
