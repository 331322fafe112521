import { eq } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { policies } from "../../db/tables";
import { recordAudit } from "../audit/record-audit";
import type { Actor, DomainDeps } from "../deps";
import { releasePolicyDevices } from "../devices/policy-followers";
import { reevaluateStaleDeviceBatch } from "../devices/reevaluate-stale-devices";
import { clearEnrollmentTokenPolicy } from "../devices/revoke-enrollment-token";
import { ConflictError } from "../errors";
import { recordEvent } from "../events/record-event";
import { findDefaultPolicyId, findPolicy } from "./find-policy";

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
export async function deletePolicy(
  deps: DomainDeps,
  actor: Actor,
  organizationId: string,
  id: string,
): Promise<PolicyDeletion> {
  const now = deps.clock.now();
  const deletion = await withTransaction(deps.db, async (tx): Promise<PolicyDeletion> => {
    const row = await findPolicy(tx, organizationId, id);
    const defaultPolicyId = await findDefaultPolicyId(tx, organizationId);
    if (row.id === defaultPolicyId) {
      throw new ConflictError(
        "default_policy_not_deletable",
        "the organization default policy cannot be deleted",
        "make another policy the organization default first",
      );
    }
    const affectedDevices = await releasePolicyDevices(tx, now, organizationId, row.id);
    await clearEnrollmentTokenPolicy(tx, organizationId, row.id);
    await tx.delete(policies).where(eq(policies.id, id));
    await recordEvent(tx, now, organizationId, "policy.deleted", {
      policy_id: id,
      name: row.name,
      affected_devices: affectedDevices,
      fallback_policy: defaultPolicyId,
    });
    await recordAudit(tx, now, actor, {
      action: "policy.delete",
      targetType: "policy",
      targetId: id,
      details: { name: row.name, affected_devices: affectedDevices, fallback_policy: defaultPolicyId },
    });
    return { affectedDevices, fallbackPolicyId: defaultPolicyId };
  });
  if (deletion.affectedDevices > 0) await reevaluateStaleDeviceBatch(deps, organizationId);
  return deletion;
}
