import type { DomainDeps } from "../deps";
import { findDefaultPolicyId } from "./find-policy";
import { loadPolicyView, type PolicyView } from "./policy-view";

/** A policy of the organization with its current document. */
export function getPolicy(deps: DomainDeps, organizationId: string, id: string): PolicyView {
  return loadPolicyView(deps.db, organizationId, id);
}

/** The organization's default policy, followed by every device without a policy of its own. */
export function getDefaultPolicy(deps: DomainDeps, organizationId: string): PolicyView {
  return loadPolicyView(deps.db, organizationId, findDefaultPolicyId(deps.db, organizationId));
}
