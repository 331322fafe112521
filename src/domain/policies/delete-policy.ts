import { and, count, eq } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { devices, enrollmentTokens, policies } from "../../db/schema";
import { toIso } from "../../lib/clock";
import { recordAudit } from "../audit/record-audit";
import type { Actor, DomainDeps } from "../deps";
import { reevaluatePolicyDevices } from "../devices/reevaluate-policy-devices";
import { ConflictError } from "../errors";
import { recordEvent } from "../events/record-event";
import { findDefaultPolicyId, findPolicy, policyFollowersFilter } from "./policy-views";

/** What a deletion did: how many devices fell back, and to which policy. */
export interface PolicyDeletion {
  affectedDevices: number;
  fallbackPolicyId: string;
}

/**
 * Deletes a policy and its versions. Its devices (and enrollment tokens) fall back to the organization
 * default, whose devices are then re-evaluated. The default policy itself cannot be deleted (409).
 */
export function deletePolicy(
  deps: DomainDeps,
  actor: Actor,
  organizationId: string,
  id: string,
): PolicyDeletion {
  const now = deps.clock.now();
  return withTransaction(deps.db, (tx) => {
    const row = findPolicy(tx, organizationId, id);
    const defaultPolicyId = findDefaultPolicyId(tx, organizationId);
    if (row.id === defaultPolicyId) {
      throw new ConflictError(
        "the organization default policy cannot be deleted",
        "make another policy the organization default first",
      );
    }
    const affectedDevices =
      tx
        .select({ value: count() })
        .from(devices)
        .where(policyFollowersFilter(organizationId, id, false))
        .get()?.value ?? 0;
    // Wiped devices are released too, so that no row keeps pointing at the deleted policy.
    tx.update(devices)
      .set({ policyId: null, updatedAt: toIso(now) })
      .where(and(eq(devices.organizationId, organizationId), eq(devices.policyId, id)))
      .run();
    tx.update(enrollmentTokens)
      .set({ policyId: null })
      .where(and(eq(enrollmentTokens.organizationId, organizationId), eq(enrollmentTokens.policyId, id)))
      .run();
    tx.delete(policies).where(eq(policies.id, id)).run();
    if (affectedDevices > 0) reevaluatePolicyDevices(tx, now, organizationId, defaultPolicyId);
    recordEvent(tx, now, organizationId, "policy.deleted", {
      policy_id: id,
      name: row.name,
      affected_devices: affectedDevices,
      fallback_policy: defaultPolicyId,
    });
    recordAudit(tx, now, actor, {
      action: "policy.delete",
      targetType: "policy",
      targetId: id,
      details: { name: row.name, affected_devices: affectedDevices, fallback_policy: defaultPolicyId },
    });
    return { affectedDevices, fallbackPolicyId: defaultPolicyId };
  });
}
