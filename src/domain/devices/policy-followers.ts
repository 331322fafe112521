import { and, count, desc, eq, inArray, isNull, ne, or, type SQL, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { devices } from "../../db/tables";
import { toIso } from "../../lib/clock";

/**
 * The devices area's answers to the policies area: which devices follow a policy, how many, and the
 * writes a policy change makes to them. The three policy writers (update, set default, delete) and the
 * policy views go through here; nothing in policies/ reads or writes the devices table itself.
 */

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
export async function countPolicyDevices(
  db: DbOrTx,
  organizationId: string,
  defaultPolicyId: string,
  policyIds: string[],
): Promise<Map<string, number>> {
  const counts = new Map(policyIds.map((policyId) => [policyId, 0]));
  if (policyIds.length === 0) return counts;
  for (const row of await selectAssignedDeviceCounts(db, organizationId, policyIds)) {
    if (row.policyId !== null) counts.set(row.policyId, row.devices);
  }
  if (counts.has(defaultPolicyId)) {
    const unassigned = (await firstRow(selectUnassignedDeviceCount(db, organizationId)))?.value ?? 0;
    counts.set(defaultPolicyId, (counts.get(defaultPolicyId) ?? 0) + unassigned);
  }
  return counts;
}

/**
 * One page of the devices that follow a policy, newest enrollment first. The assigned devices are one
 * range of devices_organization_policy_idx; for the default policy the devices without a policy are a
 * second range, merged in order by UNION ALL, so a page never sorts or scans the organization's devices.
 */
export function selectPolicyDevicePage(
  db: DbOrTx,
  organizationId: string,
  policyId: string,
  isDefault: boolean,
  page: { page: number; pageSize: number },
) {
  const assigned = db.select().from(devices).where(assignedDevicesFilter(organizationId, policyId));
  const followers = isDefault
    ? assigned.unionAll(db.select().from(devices).where(assignedDevicesFilter(organizationId, null)))
    : assigned;
  return followers
    .orderBy(desc(devices.enrolledAt), desc(devices.id))
    .limit(page.pageSize)
    .offset((page.page - 1) * page.pageSize);
}

/**
 * Which devices of an organization a policy change touches: those assigned to `policyId` (and, when
 * `includeUnassigned`, those without a policy, which follow the default), or only the unassigned ones.
 */
export type PolicyFollowers = { policyId: string; includeUnassigned: boolean } | { unassignedOnly: true };

/**
 * Marks the non-wiped devices that follow a changed policy as stale, in one UPDATE inside the caller's
 * transaction; the stale ones are re-evaluated in batches afterwards (reevaluateStaleDevices), so a
 * policy change never holds the write lock for as long as its devices take to evaluate.
 */
export async function markPolicyDevicesStale(
  tx: DbOrTx,
  organizationId: string,
  followers: PolicyFollowers,
): Promise<void> {
  const follows: SQL | undefined =
    "unassignedOnly" in followers
      ? isNull(devices.policyId)
      : followers.includeUnassigned
        ? or(eq(devices.policyId, followers.policyId), isNull(devices.policyId))
        : eq(devices.policyId, followers.policyId);
  await tx
    .update(devices)
    .set({ complianceStale: true })
    .where(and(eq(devices.organizationId, organizationId), ne(devices.status, "wiped"), follows));
}

/**
 * A policy is being deleted: its devices fall back to the organization default. Wiped devices are
 * released too, so that no row keeps pointing at the deleted policy; the others are marked stale to be
 * re-evaluated against the default. Returns how many non-wiped devices fell back.
 */
export async function releasePolicyDevices(
  tx: DbOrTx,
  now: Date,
  organizationId: string,
  policyId: string,
): Promise<number> {
  const affected =
    (
      await firstRow(
        tx.select({ value: count() }).from(devices).where(assignedDevicesFilter(organizationId, policyId)),
      )
    )?.value ?? 0;
  await tx
    .update(devices)
    .set({
      policyId: null,
      updatedAt: toIso(now),
      complianceStale: sql`${devices.complianceStale} OR ${devices.status} != 'wiped'`,
    })
    .where(and(eq(devices.organizationId, organizationId), eq(devices.policyId, policyId)));
  return affected;
}
