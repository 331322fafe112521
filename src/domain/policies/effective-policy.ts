import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { oncePerDatabase, preparedRead } from "../../db/prepared";
import { organizations, policies, policyVersions } from "../../db/schema";
import { NotFoundError } from "../errors";
import type { PolicyData } from "./policy-document";

/** The policy a device follows: its own, or the organization default when it has none. */
export interface EffectivePolicy {
  id: string;
  name: string;
  version: number;
  /** Shared and frozen: a version's document never changes, so it is parsed once and cached. */
  policyData: PolicyData;
  /** When the current version was written. */
  changedAt: string;
  isDefault: boolean;
}

// Every check-in and device read resolves a policy: prepared once per database. One table is read and
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

/** Parsed documents by policy id and version (versions are immutable); bounded, emptied when full. */
const MAX_CACHED_DOCUMENTS = 4096;
const documents = new WeakMap<Db, Map<string, PolicyData>>();

function versionDocument(db: Db, policyId: string, version: number): PolicyData {
  let cache = documents.get(db);
  if (!cache) {
    cache = new Map();
    documents.set(db, cache);
  }
  const key = `${policyId}/${version}`;
  const cached = cache.get(key);
  if (cached) return cached;
  const row = documentQuery(db).get({ policyId, version });
  if (!row) throw new NotFoundError("policy");
  const document = deepFreeze(row.policyData as PolicyData);
  if (cache.size >= MAX_CACHED_DOCUMENTS) cache.clear();
  cache.set(key, document);
  return document;
}

function deepFreeze<T>(value: T): T {
  if (value && typeof value === "object" && !Object.isFrozen(value)) {
    for (const child of Object.values(value)) deepFreeze(child);
    Object.freeze(value);
  }
  return value;
}

/**
 * Resolves the current version of `explicitPolicyId` (in any case), or of the organization default when
 * it is null. Takes the database, not a transaction: its prepared query runs in the caller's transaction.
 */
export function resolveEffectivePolicy(
  db: Db,
  organizationId: string,
  explicitPolicyId: string | null,
): EffectivePolicy {
  const row = currentVersionQuery(db).get({
    organizationId,
    policyId: explicitPolicyId?.toLowerCase() ?? null,
  });
  if (!row) {
    throw explicitPolicyId === null
      ? new NotFoundError("policy", "the organization has no default policy")
      : new NotFoundError("policy");
  }
  return {
    id: row.id,
    name: row.name,
    version: row.version,
    policyData: versionDocument(db, row.id, row.version),
    changedAt: row.changedAt,
    isDefault: row.id === row.defaultPolicyId,
  };
}
