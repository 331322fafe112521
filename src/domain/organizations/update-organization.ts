import { eq } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { organizations } from "../../db/schema";
import { toIso } from "../../lib/clock";
import { recordAudit } from "../audit/record-audit";
import type { Actor, DomainDeps } from "../deps";
import { NotFoundError, ValidationError } from "../errors";
import { getOrganization } from "./get-organization";
import type { OrganizationView, Plan, SsoSettings } from "./organization-view";

/** Renames, changes plan or SSO settings; SAML needs the enterprise plan. */
export function updateOrganization(
  deps: DomainDeps,
  actor: Actor,
  organizationId: string,
  input: { name?: string; plan?: Plan; sso?: SsoSettings },
): OrganizationView {
  const now = deps.clock.now();
  withTransaction(deps.db, (tx) => {
    const row = tx.select().from(organizations).where(eq(organizations.id, organizationId)).get();
    if (!row) throw new NotFoundError("organization");
    const plan = input.plan ?? row.plan;
    const sso = { ...(row.ssoSettings as SsoSettings), ...(input.sso ?? {}) };
    if (input.sso?.oidc && input.sso.oidc.client_secret === undefined) {
      const previous = (row.ssoSettings as SsoSettings).oidc?.client_secret;
      if (previous) sso.oidc = { ...input.sso.oidc, client_secret: previous };
    }
    if (sso.saml?.enabled && plan !== "enterprise") {
      throw new ValidationError("SAML single sign-on needs the enterprise plan", [
        { field: "sso.saml.enabled", message: "SAML needs plan enterprise", received: true },
      ]);
    }
    tx.update(organizations)
      .set({
        name: input.name ?? row.name,
        plan,
        ssoSettings: sso as Record<string, unknown>,
        updatedAt: toIso(now),
      })
      .where(eq(organizations.id, organizationId))
      .run();
    const changed = Object.keys(input).filter((key) => input[key as keyof typeof input] !== undefined);
    recordAudit(tx, now, actor, {
      action: "organization.update",
      targetType: "organization",
      targetId: organizationId,
      details: { fields: changed },
    });
  });
  return getOrganization(deps, organizationId);
}
