import type { DomainDeps } from "../deps";
import { findDefaultPolicyId } from "./find-policy";
import { loadPolicyView, type PolicyView } from "./policy-view";

/** A policy of the organization with its current document. */
export async function getPolicy(deps: DomainDeps, organizationId: string, id: string): Promise<PolicyView> {
  return await loadPolicyView(deps.db, organizationId, id);
}

/** The organization's default policy, followed by every device without a policy of its own. */
export async function getDefaultPolicy(deps: DomainDeps, organizationId: string): Promise<PolicyView> {
  return await loadPolicyView(deps.db, organizationId, await findDefaultPolicyId(deps.db, organizationId));
}
