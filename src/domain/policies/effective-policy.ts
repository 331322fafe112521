import type { Db } from "../../db/client";
import { lookUpCurrentPolicyVersion, lookUpPolicyDocument } from "../../db/lookups";
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

/** Parsed documents by policy id and version (versions are immutable); bounded, emptied when full. */
const MAX_CACHED_DOCUMENTS = 4096;
const documents = new WeakMap<Db, Map<string, PolicyData>>();

async function versionDocument(db: Db, policyId: string, version: number): Promise<PolicyData> {
  let cache = documents.get(db);
  if (!cache) {
    cache = new Map();
    documents.set(db, cache);
  }
  const key = `${policyId}/${version}`;
  const cached = cache.get(key);
  if (cached) return cached;
  const row = await lookUpPolicyDocument(db, policyId, version);
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
 * it is null, on the handle given: inside a transaction, pass `tx`.
 */
export async function resolveEffectivePolicy(
  db: Db,
  organizationId: string,
  explicitPolicyId: string | null,
): Promise<EffectivePolicy> {
  const row = await lookUpCurrentPolicyVersion(db, organizationId, explicitPolicyId?.toLowerCase() ?? null);
  if (!row) throw missingPolicyError(explicitPolicyId);
  return {
    id: row.id,
    name: row.name,
    version: row.version,
    policyData: await versionDocument(db, row.id, row.version),
    changedAt: row.changedAt,
    isDefault: row.id === row.defaultPolicyId,
  };
}

/** The error for a device whose policy (its own, or the organization default when it has none) is gone. */
export function missingPolicyError(explicitPolicyId: string | null): NotFoundError {
  return explicitPolicyId === null
    ? new NotFoundError("policy", "the organization has no default policy")
    : new NotFoundError("policy");
}
