import { and, eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { organizations, policies, policyVersions } from "../../db/tables";
import { NotFoundError } from "../errors";
import type { PolicyData } from "./policy-document";
import type { PolicyRow } from "./policy-view";

/** Finds a policy of the organization (ids in any case); another organization's policy is not found. */
export async function findPolicy(db: DbOrTx, organizationId: string, id: string): Promise<PolicyRow> {
  const row = await firstRow(
    db
      .select()
      .from(policies)
      .where(and(eq(policies.id, id.toLowerCase()), eq(policies.organizationId, organizationId))),
  );
  if (!row) throw new NotFoundError("policy");
  return row;
}

/** The id of the organization's default policy. */
export async function findDefaultPolicyId(db: DbOrTx, organizationId: string): Promise<string> {
  const organization = await firstRow(
    db
      .select({ defaultPolicyId: organizations.defaultPolicyId })
      .from(organizations)
      .where(eq(organizations.id, organizationId)),
  );
  if (!organization?.defaultPolicyId) {
    throw new NotFoundError("policy", "the organization has no default policy");
  }
  return organization.defaultPolicyId;
}

/** The document of a policy's current version. */
export async function readCurrentPolicyData(db: DbOrTx, policy: PolicyRow): Promise<PolicyData> {
  const version = await firstRow(
    db
      .select({ policyData: policyVersions.policyData })
      .from(policyVersions)
      .where(and(eq(policyVersions.policyId, policy.id), eq(policyVersions.version, policy.currentVersion))),
  );
  if (!version) throw new Error(`policy ${policy.id} has no row for its version ${policy.currentVersion}`);
  return version.policyData as PolicyData;
}
