import { and, eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { policies } from "../../db/schema";
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

/** Policy names are unique in an organization: 409 when `name` is taken by another policy. */
export function assertPolicyNameAvailable(
  db: DbOrTx,
  organizationId: string,
  name: string,
  exceptPolicyId?: string,
): void {
  const holder = db
    .select({ id: policies.id })
    .from(policies)
    .where(and(eq(policies.organizationId, organizationId), eq(policies.name, name)))
    .get();
  if (holder && holder.id !== exceptPolicyId) {
    throw new ConflictError(
      "policy_name_taken",
      "a policy with this name already exists",
      `the name "${name}" is taken`,
    );
  }
}
