import { eq } from "drizzle-orm";
import { selectNewestFirstPage } from "../../db/paged-query";
import { policies } from "../../db/tables";
import type { DomainDeps } from "../deps";
import { countPolicyDevices } from "../devices/policy-followers";
import { findDefaultPolicyId } from "./find-policy";
import { type PolicyListItem, toPolicyListItem } from "./policy-view";

/** A page of the organization's policies, newest first, with their device counts. */
export async function listPolicies(
  deps: DomainDeps,
  organizationId: string,
  page: { page: number; pageSize: number },
): Promise<{ data: PolicyListItem[]; total: number }> {
  const inOrganization = eq(policies.organizationId, organizationId);
  const { data: rows, total } = await selectNewestFirstPage(deps.db, policies, inOrganization, page);
  const defaultPolicyId = await findDefaultPolicyId(deps.db, organizationId);
  const deviceCounts = await countPolicyDevices(
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
