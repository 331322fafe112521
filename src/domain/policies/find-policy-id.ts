import { and, eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { policies } from "../../db/tables";

/** The id of a policy of the organization (id in any case), or undefined. */
export async function findPolicyId(
  db: DbOrTx,
  organizationId: string,
  policyId: string,
): Promise<string | undefined> {
  return (
    await firstRow(
      db
        .select({ id: policies.id })
        .from(policies)
        .where(and(eq(policies.id, policyId.toLowerCase()), eq(policies.organizationId, organizationId))),
    )
  )?.id;
}
