import { type Static, Type } from "@sinclair/typebox";
import { and, count, desc, eq } from "drizzle-orm";
import { firstRow } from "../../db/first-row";
import { policyVersions } from "../../db/tables";
import { Timestamp, Uuid } from "../../lib/schema-types";
import type { DomainDeps } from "../deps";
import { NotFoundError } from "../errors";
import { findPolicy } from "./find-policy";
import type { PolicyData } from "./policy-document";
import { PolicyDataSchema } from "./policy-document";
import { PolicyVersion } from "./policy-view";

/** One version in a policy's history: who wrote it, when, and what it changed. */
export const PolicyHistoryEntrySchema = Type.Object(
  {
    version: PolicyVersion,
    changed_by: Type.String({
      description: "Email of the user, or name of the API key, that made the change",
    }),
    changed_at: Timestamp,
    changes: Type.Array(Type.String(), {
      description: 'What changed, e.g. "dlp.screenshot_allowed: true -> false"; version 1 says "created"',
    }),
  },
  { title: "PolicyHistoryEntry" },
);

export const PolicyVersionSchema = Type.Object(
  {
    policy_id: Uuid,
    version: PolicyVersion,
    name: Type.String(),
    description: Type.String(),
    policy_data: PolicyDataSchema,
    changed_by: PolicyHistoryEntrySchema.properties.changed_by,
    changed_at: Timestamp,
    changes: PolicyHistoryEntrySchema.properties.changes,
  },
  { title: "PolicyVersion" },
);

export type PolicyHistoryEntry = Static<typeof PolicyHistoryEntrySchema>;
export type PolicyVersionView = Static<typeof PolicyVersionSchema>;

/** A page of a policy's versions, newest first. */
export async function listPolicyHistory(
  deps: DomainDeps,
  organizationId: string,
  policyId: string,
  page: { page: number; pageSize: number },
): Promise<{ data: PolicyHistoryEntry[]; total: number }> {
  const policy = await findPolicy(deps.db, organizationId, policyId);
  const ofPolicy = eq(policyVersions.policyId, policy.id);
  const rows = await deps.db
    .select({
      version: policyVersions.version,
      changed_by: policyVersions.changedBy,
      changed_at: policyVersions.changedAt,
      changes: policyVersions.changes,
    })
    .from(policyVersions)
    .where(ofPolicy)
    .orderBy(desc(policyVersions.version))
    .limit(page.pageSize)
    .offset((page.page - 1) * page.pageSize);
  const total =
    (await firstRow(deps.db.select({ value: count() }).from(policyVersions).where(ofPolicy)))?.value ?? 0;
  return { data: rows, total };
}

/** One version of a policy, as it was written. */
export async function getPolicyVersion(
  deps: DomainDeps,
  organizationId: string,
  policyId: string,
  version: number,
): Promise<PolicyVersionView> {
  const policy = await findPolicy(deps.db, organizationId, policyId);
  const row = await firstRow(
    deps.db
      .select()
      .from(policyVersions)
      .where(and(eq(policyVersions.policyId, policy.id), eq(policyVersions.version, version))),
  );
  if (!row) {
    throw new NotFoundError(
      "policy version",
      `versions of this policy run from 1 to ${policy.currentVersion}`,
    );
  }
  return {
    policy_id: row.policyId,
    version: row.version,
    name: row.name,
    description: row.description,
    policy_data: row.policyData as PolicyData,
    changed_by: row.changedBy,
    changed_at: row.changedAt,
    changes: row.changes,
  };
}
