import { eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { organizations } from "../../db/schema";
import { toIso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import { insertDefaultPolicy } from "../policies/insert-policy";
import type { Plan } from "./organization-view";

/** Creates an organization with its default policy, in the caller's transaction. */
export function createOrganization(
  tx: DbOrTx,
  now: Date,
  input: { name: string; plan?: Plan },
): typeof organizations.$inferSelect {
  const timestamp = toIso(now);
  const row = {
    id: newId(),
    name: input.name,
    plan: input.plan ?? "standard",
    defaultPolicyId: null as string | null,
    ssoSettings: {},
    deviceCount: 0,
    deviceListVersion: 0,
    requireMfa: false,
    createdAt: timestamp,
    updatedAt: timestamp,
  };
  tx.insert(organizations).values(row).run();
  const policy = insertDefaultPolicy(tx, now, row.id);
  tx.update(organizations).set({ defaultPolicyId: policy.id }).where(eq(organizations.id, row.id)).run();
  return { ...row, defaultPolicyId: policy.id };
}
