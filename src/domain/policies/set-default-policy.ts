import { eq } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { organizations } from "../../db/tables";
import { toIso } from "../../lib/clock";
import { recordAudit } from "../audit/record-audit";
import type { Actor, DomainDeps } from "../deps";
import { markPolicyDevicesStale } from "../devices/policy-followers";
import { reevaluateStaleDeviceBatch } from "../devices/reevaluate-stale-devices";
import { recordEvent } from "../events/record-event";
import { findDefaultPolicyId, findPolicy } from "./find-policy";
import { loadPolicyView, type PolicyView } from "./policy-view";

/**
 * Makes a policy of the organization its default, followed by every device without a policy of its
 * own; those devices are marked stale and re-evaluated against it in batches once the change commits.
 * Choosing the current default changes nothing.
 */
export async function setDefaultPolicy(
  deps: DomainDeps,
  actor: Actor,
  organizationId: string,
  policyId: string,
): Promise<PolicyView> {
  const now = deps.clock.now();
  let hasStaleDevices = false;
  const view = await withTransaction(deps.db, async (tx) => {
    const policy = await findPolicy(tx, organizationId, policyId);
    const previousPolicyId = await findDefaultPolicyId(tx, organizationId);
    if (policy.id !== previousPolicyId) {
      hasStaleDevices = true;
      await tx
        .update(organizations)
        .set({ defaultPolicyId: policy.id, updatedAt: toIso(now) })
        .where(eq(organizations.id, organizationId));
      await markPolicyDevicesStale(tx, organizationId, { unassignedOnly: true });
      await recordEvent(tx, now, organizationId, "policy.assigned", {
        policy_id: policy.id,
        name: policy.name,
        scope: "organization_default",
        previous_policy_id: previousPolicyId,
      });
      await recordAudit(tx, now, actor, {
        action: "policy.set_default",
        targetType: "policy",
        targetId: policy.id,
        details: { name: policy.name, previous_policy_id: previousPolicyId },
      });
    }
    return await loadPolicyView(tx, organizationId, policy.id);
  });
  if (hasStaleDevices) await reevaluateStaleDeviceBatch(deps, organizationId);
  return view;
}
