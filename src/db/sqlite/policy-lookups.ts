/**
 * The policy reads every check-in and device read makes, on SQLite: prepared once per connection, shaped
 * for the planner Bun ships (see prepared.ts). The domain calls these functions and never the statements.
 */
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../client";
import { organizations, policies, policyVersions } from "../schema";
import { oncePerDatabase, preparedRead } from "./prepared";

// Every check-in and device read resolves a policy: prepared once per connection. One table is read and
// the others' columns come through scalar subqueries with qualified names, as in authenticate.ts: SQLite
// as Bun ships it prepares a join that binds a parameter again at every execution (~10 µs here).
const currentVersionQuery = preparedRead((db: Db) => {
  const defaultPolicyId = sql`(SELECT organizations.default_policy_id FROM organizations WHERE organizations.id = ${sql.placeholder("organizationId")})`;
  return db
    .select({
      id: policies.id,
      name: policies.name,
      version: policies.currentVersion,
      changedAt: sql
        .raw(
          "(SELECT policy_versions.changed_at FROM policy_versions WHERE policy_versions.policy_id = policies.id AND policy_versions.version = policies.current_version)",
        )
        .mapWith(policyVersions.changedAt),
      defaultPolicyId: defaultPolicyId.mapWith(organizations.defaultPolicyId),
    })
    .from(policies)
    .where(
      and(
        eq(policies.organizationId, sql.placeholder("organizationId")),
        eq(policies.id, sql`coalesce(${sql.placeholder("policyId")}, ${defaultPolicyId})`),
      ),
    );
});

const documentQuery = oncePerDatabase((db: Db) =>
  db
    .select({ policyData: policyVersions.policyData })
    .from(policyVersions)
    .where(
      and(
        eq(policyVersions.policyId, sql.placeholder("policyId")),
        eq(policyVersions.version, sql.placeholder("version")),
      ),
    )
    .prepare(),
);

/** The current version of the policy (or of the organization's default when `policyId` is null). */
export function lookUpCurrentPolicyVersion(db: Db, organizationId: string, policyId: string | null) {
  return currentVersionQuery(db).get({ organizationId, policyId });
}

/** The document of one version of a policy. */
export function lookUpPolicyDocument(db: Db, policyId: string, version: number) {
  return documentQuery(db).get({ policyId, version });
}
