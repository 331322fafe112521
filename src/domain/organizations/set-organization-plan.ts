import { eq, or } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { organizations } from "../../db/tables";
import { toIso } from "../../lib/clock";
import { recordAudit } from "../audit/record-audit";
import { type DomainDeps, systemActor } from "../deps";
import { ConflictError, NotFoundError } from "../errors";
import { readStoredSso } from "../sso/sso-settings-view";
import type { Plan } from "./organization-view";

/**
 * Sets an organization's plan (named by id or name). Only the operator of the installation does this,
 * through `bulwark org set-plan`: the plan raises rate limits and unlocks SAML, so an organization's own
 * admin must not be able to grant it. A plan cannot drop to standard while SAML is enabled.
 */
export async function setOrganizationPlan(
  deps: DomainDeps,
  input: { organization: string; plan: Plan },
): Promise<{ id: string; name: string; previousPlan: Plan }> {
  const now = deps.clock.now();
  return await withTransaction(deps.db, async (tx) => {
    const row = await firstRow(
      tx
        .select()
        .from(organizations)
        .where(or(eq(organizations.id, input.organization), eq(organizations.name, input.organization))),
    );
    if (!row)
      throw new NotFoundError("organization", `no organization has the id or name "${input.organization}"`);
    if (input.plan !== "enterprise" && readStoredSso(row.ssoSettings).saml?.enabled) {
      throw new ConflictError(
        "saml_requires_enterprise",
        "SAML single sign-on needs the enterprise plan",
        "disable SAML in the organization's sso settings first",
      );
    }
    await tx
      .update(organizations)
      .set({ plan: input.plan, updatedAt: toIso(now) })
      .where(eq(organizations.id, row.id));
    await recordAudit(tx, now, systemActor(row.id), {
      action: "organization.set_plan",
      targetType: "organization",
      targetId: row.id,
      details: { plan: input.plan, previous_plan: row.plan },
    });
    return { id: row.id, name: row.name, previousPlan: row.plan };
  });
}
