import { and, eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { organizations, policies, policyVersions } from "../../db/schema";
import type { Actor } from "../deps";
import { countPolicyDevices } from "../devices/policy-followers";
import { ConflictError, NotFoundError, ValidationError } from "../errors";
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

/** Finds a policy of the organization (ids in any case); another organization's policy is not found. */
export function findPolicy(db: DbOrTx, organizationId: string, id: string): PolicyRow {
  const row = db
    .select()
    .from(policies)
    .where(and(eq(policies.id, id.toLowerCase()), eq(policies.organizationId, organizationId)))
    .get();
  if (!row) throw new NotFoundError("policy");
  return row;
}

/** The id of the organization's default policy. */
export function findDefaultPolicyId(db: DbOrTx, organizationId: string): string {
  const organization = db
    .select({ defaultPolicyId: organizations.defaultPolicyId })
    .from(organizations)
    .where(eq(organizations.id, organizationId))
    .get();
  if (!organization?.defaultPolicyId) {
    throw new NotFoundError("policy", "the organization has no default policy");
  }
  return organization.defaultPolicyId;
}

/** The document of a policy's current version. */
export function readCurrentPolicyData(db: DbOrTx, policy: PolicyRow): PolicyData {
  const version = db
    .select({ policyData: policyVersions.policyData })
    .from(policyVersions)
    .where(and(eq(policyVersions.policyId, policy.id), eq(policyVersions.version, policy.currentVersion)))
    .get();
  if (!version) throw new Error(`policy ${policy.id} has no row for its version ${policy.currentVersion}`);
  return version.policyData as PolicyData;
}

/** A policy name as stored: without surrounding whitespace, and not blank (400 naming `name`). */
export function normalizePolicyName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === "") {
    throw new ValidationError("invalid request body", [
      { field: "name", message: "must not be blank", received: name },
    ]);
  }
  return trimmed;
}

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

/** Policy names are unique in an organization: 409 when `name` is taken by another policy. */
export function assertPolicyNameAvailable(
  db: DbOrTx,
  organizationId: string,
  name: string,
  exceptPolicyId?: string,
): void {
  const holder = db
    .select({ id: policies.id })
    .from(policies)
    .where(and(eq(policies.organizationId, organizationId), eq(policies.name, name)))
    .get();
  if (holder && holder.id !== exceptPolicyId) {
    throw new ConflictError(
      "policy_name_taken",
      "a policy with this name already exists",
      `the name "${name}" is taken`,
    );
  }
}

/** The `changed_by` of policy history: the actor's email or API key name. */
export function changedByOf(actor: Actor): string {
  return actor.label ?? actor.type;
}
