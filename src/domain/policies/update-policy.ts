import { eq } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { policies, policyVersions } from "../../db/tables";
import { toIso } from "../../lib/clock";
import { recordAudit } from "../audit/record-audit";
import type { Actor, DomainDeps } from "../deps";
import { markPolicyDevicesStale } from "../devices/policy-followers";
import { reevaluateStaleDeviceBatch } from "../devices/reevaluate-stale-devices";
import { ConflictError, ValidationError } from "../errors";
import { recordEvent } from "../events/record-event";
import { changedByOf } from "./changed-by";
import { describePolicyChanges, isSamePolicyDocument } from "./describe-policy-changes";
import { findDefaultPolicyId, findPolicy, readCurrentPolicyData } from "./find-policy";
import { assertPolicyNameAvailable, normalizePolicyName, policyNameKey } from "./policy-name";
import { loadPolicyView, type PolicyView } from "./policy-view";
import { requireValidPolicyData, validatePolicyData } from "./validate-policy-document";

/** What PUT /policies/:id may change; `policyData` is partial and merged over the current document. */
export interface PolicyUpdate {
  name?: string;
  description?: string;
  policyData?: unknown;
  /** When given, the update is refused (409) unless the policy is still at this version. */
  expectedVersion?: number;
}

/**
 * Writes a new version of a policy when the update changes something (version + 1, with its change
 * lines). When its settings changed, the devices that follow it are marked stale in the same transaction
 * and, once it commits, a first batch of them is re-evaluated (the reevaluate-stale-compliance job does
 * the rest). An update that changes nothing keeps the current version and records nothing.
 */
export async function updatePolicy(
  deps: DomainDeps,
  actor: Actor,
  organizationId: string,
  id: string,
  update: PolicyUpdate,
): Promise<PolicyView> {
  if (update.name === undefined && update.description === undefined && update.policyData === undefined) {
    throw new ValidationError("invalid request body", [
      { field: "body", message: "must contain name, description or policy_data" },
    ]);
  }
  const name = update.name === undefined ? undefined : normalizePolicyName(update.name);
  const now = deps.clock.now();
  let hasStaleDevices = false;
  const view = await withTransaction(deps.db, async (tx) => {
    const row = await findPolicy(tx, organizationId, id);
    if (update.expectedVersion !== undefined && update.expectedVersion !== row.currentVersion) {
      throw new ConflictError(
        "policy_version_mismatch",
        "the policy was changed by someone else",
        `expected_version is ${update.expectedVersion} but the current version is ${row.currentVersion}`,
      );
    }
    const current = {
      name: row.name,
      description: row.description,
      policy_data: await readCurrentPolicyData(tx, row),
    };
    const policyData = requireValidPolicyData(
      validatePolicyData(update.policyData, { base: current.policy_data }),
    );
    const next = {
      name: name ?? current.name,
      description: update.description ?? current.description,
      policy_data: policyData,
    };
    const changes = describePolicyChanges(current, next);
    if (changes.length === 0) return await loadPolicyView(tx, organizationId, id);

    if (next.name !== current.name) await assertPolicyNameAvailable(tx, organizationId, next.name, id);
    const version = row.currentVersion + 1;
    const timestamp = toIso(now);
    await tx.insert(policyVersions).values({
      policyId: id,
      version,
      name: next.name,
      description: next.description,
      policyData: next.policy_data,
      changes,
      changedBy: changedByOf(actor),
      changedAt: timestamp,
    });
    await tx
      .update(policies)
      .set({
        name: next.name,
        nameKey: policyNameKey(next.name),
        description: next.description,
        currentVersion: version,
        updatedAt: timestamp,
      })
      .where(eq(policies.id, id));
    if (!isSamePolicyDocument(current.policy_data, next.policy_data)) {
      const isDefault = (await findDefaultPolicyId(tx, organizationId)) === row.id;
      await markPolicyDevicesStale(tx, organizationId, { policyId: row.id, includeUnassigned: isDefault });
      hasStaleDevices = true;
    }
    await recordEvent(tx, now, organizationId, "policy.updated", {
      policy_id: id,
      name: next.name,
      version,
      changes,
    });
    await recordAudit(tx, now, actor, {
      action: "policy.update",
      targetType: "policy",
      targetId: id,
      details: { version, changes },
    });
    return await loadPolicyView(tx, organizationId, id);
  });
  if (hasStaleDevices) await reevaluateStaleDeviceBatch(deps, organizationId);
  return view;
}
