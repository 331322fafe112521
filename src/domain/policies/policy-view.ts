import type { DbOrTx } from "../../db/client";
import type { policies } from "../../db/schema";
import { countPolicyDevices } from "../devices/policy-followers";
import { findDefaultPolicyId, findPolicy, readCurrentPolicyData } from "./find-policy";
import type { PolicyData } from "./policy-document";

/** A stored policy (its current version number, not its document). */
export type PolicyRow = typeof policies.$inferSelect;

/** The full policy object (SPEC.md's fields plus is_default). */
export interface PolicyView {
  id: string;
  organization_id: string;
  name: string;
  description: string;
  policy_data: PolicyData;
  version: number;
  active: boolean;
  device_count: number;
  is_default: boolean;
  created_at: string;
  updated_at: string;
}

/** One row of the policy list: the full object without its document. */
export type PolicyListItem = Omit<PolicyView, "organization_id" | "policy_data">;

/** The list item of a policy row. */
export function toPolicyListItem(row: PolicyRow, deviceCount: number, isDefault: boolean): PolicyListItem {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    version: row.currentVersion,
    active: row.isActive,
    device_count: deviceCount,
    is_default: isDefault,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

/** The full object of a policy of the organization, with its current document and device count. */
export function loadPolicyView(db: DbOrTx, organizationId: string, id: string): PolicyView {
  const row = findPolicy(db, organizationId, id);
  const defaultPolicyId = findDefaultPolicyId(db, organizationId);
  const deviceCount = countPolicyDevices(db, organizationId, defaultPolicyId, [row.id]).get(row.id) ?? 0;
  return toPolicyView(row, readCurrentPolicyData(db, row), deviceCount, row.id === defaultPolicyId);
}

/** The full object of a policy row and its current document. */
export function toPolicyView(
  row: PolicyRow,
  policyData: PolicyData,
  deviceCount: number,
  isDefault: boolean,
): PolicyView {
  return {
    ...toPolicyListItem(row, deviceCount, isDefault),
    organization_id: row.organizationId,
    policy_data: policyData,
  };
}
