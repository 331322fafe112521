import { and, eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { policies } from "../../db/schema";

/** The id of a policy of the organization (id in any case), or undefined. */
export function findPolicyId(db: DbOrTx, organizationId: string, policyId: string): string | undefined {
  return db
    .select({ id: policies.id })
    .from(policies)
    .where(and(eq(policies.id, policyId.toLowerCase()), eq(policies.organizationId, organizationId)))
    .get()?.id;
}
