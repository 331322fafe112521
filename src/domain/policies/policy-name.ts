import { and, eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { policies } from "../../db/tables";
import { foldCase } from "../../lib/fold-case";
import { ConflictError, ValidationError } from "../errors";

/** A policy name as stored: without surrounding whitespace, and not blank (400 naming `name`). */
export function normalizePolicyName(name: string): string {
  const trimmed = name.trim();
  if (trimmed === "") {
    throw new ValidationError("invalid request body", [
      { field: "name", message: "must not be blank", received: name },
    ]);
  }
  return trimmed;
}

/** What policy names are compared by: "Finance laptops" and "finance laptops" are one name. */
export function policyNameKey(name: string): string {
  return foldCase(name);
}

/**
 * Policy names are unique in an organization, ignoring case: 409 when `name` is taken by another
 * policy (the unique index on policies.name_key holds it too).
 */
export async function assertPolicyNameAvailable(
  db: DbOrTx,
  organizationId: string,
  name: string,
  exceptPolicyId?: string,
): Promise<void> {
  const holder = await firstRow(
    db
      .select({ id: policies.id, name: policies.name })
      .from(policies)
      .where(and(eq(policies.organizationId, organizationId), eq(policies.nameKey, policyNameKey(name)))),
  );
  if (holder && holder.id !== exceptPolicyId) {
    throw new ConflictError(
      "policy_name_taken",
      "a policy with this name already exists",
      holder.name === name
        ? `the name "${name}" is taken`
        : `the name "${name}" is taken: policy "${holder.name}" differs only in case, and names ignore case`,
    );
  }
}
