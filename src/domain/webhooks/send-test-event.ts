import { withTransaction } from "../../db/client";
import { recordAudit } from "../audit/record-audit";
import type { Actor, DomainDeps } from "../deps";
import { ConflictError } from "../errors";
import { insertEvent, insertPendingDelivery } from "../events/record-event";
import { findWebhook } from "./webhook-view";

/**
 * Records a webhook.test event and queues its delivery to this subscription only, whatever its event
 * filter; the dispatcher sends it like any other delivery.
 */
export async function sendTestEvent(
  deps: DomainDeps,
  actor: Actor,
  organizationId: string,
  id: string,
): Promise<{ eventId: string; deliveryId: string }> {
  const now = deps.clock.now();
  return await withTransaction(deps.db, async (tx) => {
    const row = await findWebhook(tx, organizationId, id);
    if (!row.isActive) {
      throw new ConflictError(
        "webhook_disabled",
        "webhook is disabled",
        're-enable it with PATCH {"active": true} first',
      );
    }
    const event = await insertEvent(tx, now, organizationId, "webhook.test", {
      webhook_id: id,
      message: "This is a test event sent from Bulwark.",
    });
    const deliveryId = await insertPendingDelivery(tx, id, event);
    await recordAudit(tx, now, actor, {
      action: "webhook.test",
      targetType: "webhook",
      targetId: id,
      details: { event_id: event.id, delivery_id: deliveryId },
    });
    return { eventId: event.id, deliveryId };
  });
}
