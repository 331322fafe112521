import { count, desc } from "drizzle-orm";
import { devices } from "../../db/schema";
import type { DomainDeps } from "../deps";
import { findDefaultPolicyId, findPolicy, policyFollowersFilter } from "./policy-views";

/** A device that follows a policy, and which version of it the device last applied. */
export interface PolicyDeviceEntry {
  id: string;
  device_name: string;
  status: (typeof devices.$inferSelect)["status"];
  /** Version of this policy the device last applied; null until its first sync with this policy. */
  policy_version: number | null;
  last_sync: string | null;
}

/**
 * A page of the devices that follow a policy (for the default policy, also the devices without a
 * policy of their own), newest enrollment first; wiped devices are left out.
 */
export function listPolicyDevices(
  deps: DomainDeps,
  organizationId: string,
  policyId: string,
  page: { page: number; pageSize: number },
): { data: PolicyDeviceEntry[]; total: number } {
  const policy = findPolicy(deps.db, organizationId, policyId);
  const isDefault = findDefaultPolicyId(deps.db, organizationId) === policy.id;
  const followers = policyFollowersFilter(organizationId, policy.id, isDefault);
  const rows = deps.db
    .select()
    .from(devices)
    .where(followers)
    .orderBy(desc(devices.enrolledAt), desc(devices.id))
    .limit(page.pageSize)
    .offset((page.page - 1) * page.pageSize)
    .all();
  const total = deps.db.select({ value: count() }).from(devices).where(followers).get()?.value ?? 0;
  return {
    data: rows.map((row) => {
      // A version the device applied while it followed another policy says nothing about this one.
      const hasSynced = row.appliedPolicyId === policy.id;
      return {
        id: row.id,
        device_name: row.deviceName,
        status: row.status,
        policy_version: hasSynced ? row.appliedPolicyVersion : null,
        last_sync: hasSynced ? row.policyAppliedAt : null,
      };
    }),
    total,
  };
}
