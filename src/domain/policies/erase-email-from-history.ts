import { sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { replaceEmailLabel } from "../../db/replace-email";

/** An erased user's email as the `changed_by` of the organization's policy versions becomes `replacement`. */
export async function eraseEmailFromPolicyHistory(
  tx: DbOrTx,
  organizationId: string,
  email: string,
  replacement: string,
): Promise<void> {
  const organizationPolicies = sql`policy_id IN (SELECT id FROM policies WHERE organization_id = ${organizationId})`;
  await replaceEmailLabel(tx, "policy_versions", "changed_by", organizationPolicies, email, replacement);
}
