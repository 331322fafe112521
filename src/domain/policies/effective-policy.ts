import { and, eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { organizations, policies, policyVersions } from "../../db/schema";
import { NotFoundError } from "../errors";
import type { PolicyData } from "./policy-document";

/** The policy a device follows: its own, or the organization default when it has none. */
export interface EffectivePolicy {
  id: string;
  name: string;
  version: number;
  policyData: PolicyData;
  /** When the current version was written. */
  changedAt: string;
  isDefault: boolean;
}

/**
 * Resolves the current version of `explicitPolicyId` (in any case), or of the organization default when
 * it is null.
 */
export function resolveEffectivePolicy(
  db: DbOrTx,
  organizationId: string,
  explicitPolicyId: string | null,
): EffectivePolicy {
  const organization = db
    .select({ defaultPolicyId: organizations.defaultPolicyId })
    .from(organizations)
    .where(eq(organizations.id, organizationId))
    .get();
  const policyId = explicitPolicyId?.toLowerCase() ?? organization?.defaultPolicyId;
  if (!policyId) throw new NotFoundError("policy", "the organization has no default policy");
  const row = db
    .select({ policy: policies, version: policyVersions })
    .from(policies)
    .innerJoin(
      policyVersions,
      and(eq(policyVersions.policyId, policies.id), eq(policyVersions.version, policies.currentVersion)),
    )
    .where(and(eq(policies.id, policyId), eq(policies.organizationId, organizationId)))
    .get();
  if (!row) throw new NotFoundError("policy");
  return {
    id: row.policy.id,
    name: row.policy.name,
    version: row.policy.currentVersion,
    policyData: row.version.policyData as PolicyData,
    changedAt: row.version.changedAt,
    isDefault: row.policy.id === organization?.defaultPolicyId,
  };
}
