import { eq } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { organizations } from "../../db/tables";
import { toIso } from "../../lib/clock";
import { recordAudit } from "../audit/record-audit";
import type { Principal } from "../auth/principal";
import type { Actor, DomainDeps } from "../deps";
import { ConflictError, ForbiddenError, NotFoundError } from "../errors";
import { isMfaEnabled } from "../mfa/user-factors";
import { assertClientIdFree, prepareSsoSettings } from "../sso/prepare-sso-settings";
import { claimSsoDomains, listedSsoDomains } from "../sso/sso-domains";
import type { SsoSettingsInput } from "../sso/sso-settings-view";
import { getOrganization } from "./get-organization";
import type { OrganizationView, Plan } from "./organization-view";

/**
 * Renames, changes SSO settings (checked by prepareSsoSettings) or require_mfa; SAML needs the enterprise plan (403). The plan itself is the
 * operator's to set (`bulwark org set-plan`): an admin who sends one gets 403.
 */
export async function updateOrganization(
  deps: DomainDeps,
  principal: Principal,
  actor: Actor,
  input: { name?: string; plan?: Plan; sso?: SsoSettingsInput; require_mfa?: boolean },
): Promise<OrganizationView> {
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
  if (input.require_mfa && !(await isMfaEnabled(deps.db, principal.userId)))
    throw new ConflictError(
      "mfa_not_enabled",
      "set up your own second factor first",
      "require_mfa: requiring multi-factor authentication needs an administrator who has it (POST /api/v1/auth/mfa/totp)",
    );
  // Whoever sets the identity provider decides who can sign in as anyone: a person, never an API key.
  if (input.sso && principal.kind === "api_key")
    throw new ForbiddenError(
      "api_key_not_allowed",
      "API keys cannot change single sign-on settings",
      "sso: sign in as an administrator to change the identity provider",
    );
  const before = await firstRow(
    deps.db.select().from(organizations).where(eq(organizations.id, organizationId)),
  );
  if (!before) throw new NotFoundError("organization");
  // Checked (discovery is a request) before the transaction, against the settings as they were read.
  const sso = input.sso ? await prepareSsoSettings(deps, organizationId, before, input.sso) : undefined;
  const now = deps.clock.now();
  await withTransaction(deps.db, async (tx) => {
    const row = await firstRow(tx.select().from(organizations).where(eq(organizations.id, organizationId)));
    if (!row) throw new NotFoundError("organization");
    if (sso?.oidc?.enabled && sso.oidc.client_id)
      await assertClientIdFree(tx, organizationId, sso.oidc.client_id);
    // A domain signs in with one organization: one another claims is refused (409 sso_domain_taken).
    if (sso) await claimSsoDomains(tx, now, organizationId, listedSsoDomains(sso));
    if (sso && row.updatedAt !== before.updatedAt)
      throw new ConflictError(
        "organization_changed",
        "the organization changed while its SSO settings were being checked",
        "send the change again",
      );
    await tx
      .update(organizations)
      .set({
        name: input.name ?? row.name,
        requireMfa: input.require_mfa ?? row.requireMfa,
        ssoSettings: (sso ?? row.ssoSettings) as Record<string, unknown>,
        updatedAt: toIso(now),
      })
      .where(eq(organizations.id, organizationId));
    const changed = Object.keys(input).filter((key) => input[key as keyof typeof input] !== undefined);
    const ssoFields = input.sso
      ? Object.entries(input.sso).flatMap(([provider, fields]) =>
          Object.keys(fields ?? {}).map((field) => `sso.${provider}.${field}`),
        )
      : [];
    await recordAudit(tx, now, actor, {
      action: "organization.update",
      targetType: "organization",
      targetId: organizationId,
      details: { fields: changed, ...(ssoFields.length > 0 ? { sso_fields: ssoFields } : {}) },
    });
  });
  return await getOrganization(deps, organizationId);
}
