import { eq } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { webhooks } from "../../db/tables";
import { recordAudit } from "../audit/record-audit";
import type { Actor, DomainDeps } from "../deps";
import { originOf } from "./webhook-input";
import { findWebhook } from "./webhook-view";

/** Deletes a subscription with its deliveries, pending ones included (they will not be sent). */
export async function deleteWebhook(
  deps: DomainDeps,
  actor: Actor,
  organizationId: string,
  id: string,
): Promise<void> {
  const now = deps.clock.now();
  await withTransaction(deps.db, async (tx) => {
    const row = await findWebhook(tx, organizationId, id);
    // Deliveries and their attempts go with it (ON DELETE CASCADE).
    await tx.delete(webhooks).where(eq(webhooks.id, id));
    await recordAudit(tx, now, actor, {
      action: "webhook.delete",
      targetType: "webhook",
      targetId: id,
      details: { target: originOf(row.url) },
    });
  });
}
