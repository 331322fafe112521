import type { DbOrTx } from "../../db/client";
import { policies, policyVersions } from "../../db/tables";
import { toIso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import type { PolicyData } from "./policy-document";
import { policyNameKey } from "./policy-name";
import { DEFAULT_POLICY_DATA } from "./policy-templates";

export const DEFAULT_POLICY_NAME = "Default policy";

/** Inserts a policy at version 1 with its first version row ("created"). Rules are checked by callers. */
export async function insertPolicy(
  tx: DbOrTx,
  now: Date,
  input: {
    organizationId: string;
    name: string;
    description: string;
    policyData: PolicyData;
    changedBy: string;
  },
): Promise<typeof policies.$inferSelect> {
  const timestamp = toIso(now);
  const row = {
    id: newId(),
    organizationId: input.organizationId,
    name: input.name,
    nameKey: policyNameKey(input.name),
    description: input.description,
    currentVersion: 1,
    isActive: true,
    createdAt: timestamp,
    updatedAt: timestamp,
  };
  await tx.insert(policies).values(row);
  await tx.insert(policyVersions).values({
    policyId: row.id,
    version: 1,
    name: row.name,
    description: row.description,
    policyData: input.policyData,
    changes: ["created"],
    changedBy: input.changedBy,
    changedAt: timestamp,
  });
  return row;
}

/** The policy every new organization starts with: "Default policy", the balanced template. */
export async function insertDefaultPolicy(
  tx: DbOrTx,
  now: Date,
  organizationId: string,
): Promise<typeof policies.$inferSelect> {
  return await insertPolicy(tx, now, {
    organizationId,
    name: DEFAULT_POLICY_NAME,
    description: "Applied to every device that has no policy of its own.",
    policyData: structuredClone(DEFAULT_POLICY_DATA),
    changedBy: "system",
  });
}
