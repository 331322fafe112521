import { and, count, eq, inArray, isNull, ne, type SQL } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { devices, organizations, policies, policyVersions } from "../../db/schema";
import type { Actor } from "../deps";
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

/**
 * Devices of the organization assigned to a policy (`policyId`), or without a policy of their own
 * (`null`, the default policy's other followers), wiped ones excepted. Either is one range of
 * devices_organization_policy_idx.
 */
export function assignedDevicesFilter(organizationId: string, policyId: string | null): SQL {
  return and(
    eq(devices.organizationId, organizationId),
    policyId === null ? isNull(devices.policyId) : eq(devices.policyId, policyId),
    ne(devices.status, "wiped"),
  ) as SQL;
}

/** Counts of the devices explicitly assigned to each of several policies, in one grouped query. */
export function selectAssignedDeviceCounts(db: DbOrTx, organizationId: string, policyIds: string[]) {
  return db
    .select({ policyId: devices.policyId, devices: count() })
    .from(devices)
    .where(
      and(
        eq(devices.organizationId, organizationId),
        inArray(devices.policyId, policyIds),
        ne(devices.status, "wiped"),
      ),
    )
    .groupBy(devices.policyId);
}

/** The count of devices without a policy of their own (they follow the default), wiped ones excepted. */
export function selectUnassignedDeviceCount(db: DbOrTx, organizationId: string) {
  return db.select({ value: count() }).from(devices).where(assignedDevicesFilter(organizationId, null));
}

/**
 * Device counts of several policies of one organization: the devices assigned to each, and for the
 * default policy also the devices without a policy. Both read only the policy index, so the cost grows
 * with the policies' own devices, not with the organization's.
 */
export function countPolicyDevices(
  db: DbOrTx,
  organizationId: string,
  defaultPolicyId: string,
  policyIds: string[],
): Map<string, number> {
  const counts = new Map(policyIds.map((policyId) => [policyId, 0]));
  if (policyIds.length === 0) return counts;
  for (const row of selectAssignedDeviceCounts(db, organizationId, policyIds).all()) {
    if (row.policyId !== null) counts.set(row.policyId, row.devices);
  }
  if (counts.has(defaultPolicyId)) {
    const unassigned = selectUnassignedDeviceCount(db, organizationId).get()?.value ?? 0;
    counts.set(defaultPolicyId, (counts.get(defaultPolicyId) ?? 0) + unassigned);
  }
  return counts;
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
