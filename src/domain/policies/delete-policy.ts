import { and, count, eq, sql } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { devices, enrollmentTokens, policies } from "../../db/schema";
import { toIso } from "../../lib/clock";
import { recordAudit } from "../audit/record-audit";
import type { Actor, DomainDeps } from "../deps";
import { reevaluateStaleDeviceBatch } from "../devices/reevaluate-stale-devices";
import { ConflictError } from "../errors";
import { recordEvent } from "../events/record-event";
import { assignedDevicesFilter, findDefaultPolicyId, findPolicy } from "./policy-views";

/** What a deletion did: how many devices fell back, and to which policy. */
export interface PolicyDeletion {
  affectedDevices: number;
  fallbackPolicyId: string;
}

/**
 * Deletes a policy and its versions. Its devices (and enrollment tokens) fall back to the organization
 * default; they are marked stale and re-evaluated in batches from the moment the deletion commits. The
 * default policy itself cannot be deleted (409).
 */
export function deletePolicy(
  deps: DomainDeps,
  actor: Actor,
  organizationId: string,
  id: string,
): PolicyDeletion {
  const now = deps.clock.now();
  const deletion = withTransaction(deps.db, (tx): PolicyDeletion => {
    const row = findPolicy(tx, organizationId, id);
    const defaultPolicyId = findDefaultPolicyId(tx, organizationId);
    if (row.id === defaultPolicyId) {
      throw new ConflictError(
        "default_policy_not_deletable",
        "the organization default policy cannot be deleted",
        "make another policy the organization default first",
      );
    }
    const affectedDevices =
      tx.select({ value: count() }).from(devices).where(assignedDevicesFilter(organizationId, row.id)).get()
        ?.value ?? 0;
    // Wiped devices are released too, so that no row keeps pointing at the deleted policy; the others
    // now follow the default and need re-evaluating.
    tx.update(devices)
      .set({
        policyId: null,
        updatedAt: toIso(now),
        complianceStale: sql`${devices.complianceStale} OR ${devices.status} != 'wiped'`,
      })
      .where(and(eq(devices.organizationId, organizationId), eq(devices.policyId, id)))
      .run();
    tx.update(enrollmentTokens)
      .set({ policyId: null })
      .where(and(eq(enrollmentTokens.organizationId, organizationId), eq(enrollmentTokens.policyId, id)))
      .run();
    tx.delete(policies).where(eq(policies.id, id)).run();
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
  if (deletion.affectedDevices > 0) reevaluateStaleDeviceBatch(deps, organizationId);
  return deletion;
}
