import { withTransaction } from "../../db/client";
import { recordAudit } from "../audit/record-audit";
import type { Actor, DomainDeps } from "../deps";
import { NotFoundError } from "../errors";
import { recordEvent } from "../events/record-event";
import { changedByOf } from "./changed-by";
import { insertPolicy } from "./insert-policy";
import type { PolicyData } from "./policy-document";
import { assertPolicyNameAvailable, normalizePolicyName } from "./policy-name";
import { findPolicyTemplate, POLICY_TEMPLATES } from "./policy-templates";
import { type PolicyView, toPolicyView } from "./policy-view";
import { requireValidPolicyData, validatePolicyData } from "./validate-policy-document";

/**
 * Creates a policy at version 1. `policyData` is partial: omitted sections and settings take the
 * defaults (the balanced template). The name is trimmed; blank is 400, taken in the organization 409.
 */
export async function createPolicy(
  deps: DomainDeps,
  actor: Actor,
  organizationId: string,
  input: { name: string; description?: string; policyData?: unknown },
): Promise<PolicyView> {
  const name = normalizePolicyName(input.name);
  const policyData = requireValidPolicyData(validatePolicyData(input.policyData));
  return await insertNewPolicy(deps, actor, organizationId, {
    name,
    description: input.description ?? "",
    policyData,
  });
}

/**
 * Creates a policy from a built-in template, with `customizations` (partial, like policy_data)
 * deep-merged over the template's document; arrays in customizations replace the template's.
 */
export async function createPolicyFromTemplate(
  deps: DomainDeps,
  actor: Actor,
  organizationId: string,
  input: { templateId: string; name: string; description?: string; customizations?: unknown },
): Promise<PolicyView> {
  const name = normalizePolicyName(input.name);
  const template = findPolicyTemplate(input.templateId);
  if (!template) {
    const known = POLICY_TEMPLATES.map((candidate) => candidate.id).join(", ");
    throw new NotFoundError("policy template", `no template "${input.templateId}"; templates: ${known}`);
  }
  const policyData = requireValidPolicyData(
    validatePolicyData(input.customizations, {
      base: template.policy_data,
      fieldPrefix: "customizations",
    }),
  );
  return await insertNewPolicy(deps, actor, organizationId, {
    name,
    description: input.description ?? "",
    policyData,
    templateId: template.id,
  });
}

async function insertNewPolicy(
  deps: DomainDeps,
  actor: Actor,
  organizationId: string,
  input: { name: string; description: string; policyData: PolicyData; templateId?: string },
): Promise<PolicyView> {
  const now = deps.clock.now();
  return await withTransaction(deps.db, async (tx) => {
    await assertPolicyNameAvailable(tx, organizationId, input.name);
    const row = await insertPolicy(tx, now, {
      organizationId,
      name: input.name,
      description: input.description,
      policyData: input.policyData,
      changedBy: changedByOf(actor),
    });
    const template = input.templateId === undefined ? {} : { template_id: input.templateId };
    await recordEvent(tx, now, organizationId, "policy.created", {
      policy_id: row.id,
      name: row.name,
      version: row.currentVersion,
      ...template,
    });
    await recordAudit(tx, now, actor, {
      action: "policy.create",
      targetType: "policy",
      targetId: row.id,
      details: { name: row.name, version: row.currentVersion, ...template },
    });
    return toPolicyView(row, input.policyData, 0, false);
  });
}
