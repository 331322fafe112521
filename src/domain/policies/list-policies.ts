import { count, desc, eq } from "drizzle-orm";
import { policies } from "../../db/schema";
import type { DomainDeps } from "../deps";
import {
  countPolicyDevices,
  findDefaultPolicyId,
  type PolicyListItem,
  toPolicyListItem,
} from "./policy-views";

/** A page of the organization's policies, newest first, with their device counts. */
export function listPolicies(
  deps: DomainDeps,
  organizationId: string,
  page: { page: number; pageSize: number },
): { data: PolicyListItem[]; total: number } {
  const inOrganization = eq(policies.organizationId, organizationId);
  const rows = deps.db
    .select()
    .from(policies)
    .where(inOrganization)
    .orderBy(desc(policies.createdAt), desc(policies.id))
    .limit(page.pageSize)
    .offset((page.page - 1) * page.pageSize)
    .all();
  const total = deps.db.select({ value: count() }).from(policies).where(inOrganization).get()?.value ?? 0;
  const defaultPolicyId = findDefaultPolicyId(deps.db, organizationId);
  const deviceCounts = countPolicyDevices(
    deps.db,
    organizationId,
    defaultPolicyId,
    rows.map((row) => row.id),
  );
  return {
    data: rows.map((row) => toPolicyListItem(row, deviceCounts.get(row.id) ?? 0, row.id === defaultPolicyId)),
    total,
  };
}
