import { eq } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { organizations } from "../../db/schema";
import { toIso } from "../../lib/clock";
import { recordAudit } from "../audit/record-audit";
import type { Principal } from "../auth/principal";
import type { Actor, DomainDeps } from "../deps";
import { ConflictError, ForbiddenError, NotFoundError } from "../errors";
import { isMfaEnabled } from "../mfa/user-factors";
import { getOrganization } from "./get-organization";
import type { OrganizationView, Plan, SsoSettings } from "./organization-view";

/**
 * Renames or changes SSO settings; SAML needs the enterprise plan (403). The plan itself is the
 * operator's to set (`bulwark org set-plan`): an admin who sends one gets 403.
 */
export function updateOrganization(
  deps: DomainDeps,
  principal: Principal,
  actor: Actor,
  input: { name?: string; plan?: Plan; sso?: SsoSettings; require_mfa?: boolean },
): OrganizationView {
  const organizationId = principal.organizationId;
  if (input.plan !== undefined) {
    throw new ForbiddenError(
      "plan_set_by_operator",
      "the plan is set by the operator of this installation",
      "the operator runs: bulwark org set-plan --org <organization> --plan standard|enterprise",
    );
  }
  // Requiring MFA of everyone while having none would shut the administrator out of everything but
  // setting one up, halfway through their own change: they set up their factor first.
  // An API key counts as its owner, who would otherwise be shut out of everything but setup just the same.
  if (input.require_mfa && !isMfaEnabled(deps.db, principal.userId))
    throw new ConflictError(
      "mfa_not_enabled",
      "set up your own second factor first",
      "require_mfa: requiring multi-factor authentication needs an administrator who has it (POST /api/v1/auth/mfa/totp)",
    );
  const now = deps.clock.now();
  withTransaction(deps.db, (tx) => {
    const row = tx.select().from(organizations).where(eq(organizations.id, organizationId)).get();
    if (!row) throw new NotFoundError("organization");
    const plan = row.plan;
    const sso = { ...(row.ssoSettings as SsoSettings), ...(input.sso ?? {}) };
    if (input.sso?.oidc && input.sso.oidc.client_secret === undefined) {
      const previous = (row.ssoSettings as SsoSettings).oidc?.client_secret;
      if (previous) sso.oidc = { ...input.sso.oidc, client_secret: previous };
    }
    if (sso.saml?.enabled && plan !== "enterprise") {
      throw new ForbiddenError(
        "saml_requires_enterprise",
        "SAML single sign-on needs the enterprise plan",
        "sso.saml.enabled: the operator sets the plan (bulwark org set-plan)",
      );
    }
    tx.update(organizations)
      .set({
        name: input.name ?? row.name,
        plan,
        requireMfa: input.require_mfa ?? row.requireMfa,
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
