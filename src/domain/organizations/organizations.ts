import { and, count, eq, isNull } from "drizzle-orm";
import { type DbOrTx, withTransaction } from "../../db/client";
import { organizations, users } from "../../db/schema";
import { toIso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import { recordAudit } from "../audit/record-audit";
import type { Actor, DomainDeps } from "../deps";
import { NotFoundError, ValidationError } from "../errors";
import { insertDefaultPolicy } from "../policies/insert-policy";

export type Plan = "standard" | "enterprise";

export interface SsoSettings {
  oidc?: { enabled: boolean; issuer?: string; client_id?: string; client_secret?: string };
  saml?: { enabled: boolean; idp_entity_id?: string; idp_sso_url?: string; idp_certificate?: string };
}

export interface OrganizationView {
  id: string;
  name: string;
  plan: Plan;
  default_policy_id: string | null;
  device_count: number;
  user_count: number;
  sso: SsoSettings;
  created_at: string;
  updated_at: string;
}

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
    createdAt: timestamp,
    updatedAt: timestamp,
  };
  tx.insert(organizations).values(row).run();
  const policy = insertDefaultPolicy(tx, now, row.id);
  tx.update(organizations).set({ defaultPolicyId: policy.id }).where(eq(organizations.id, row.id)).run();
  return { ...row, defaultPolicyId: policy.id };
}

/** Secrets in SSO settings are never returned; a boolean says whether one is set. */
function redactSso(settings: Record<string, unknown>): SsoSettings {
  const sso = structuredClone(settings) as SsoSettings & {
    oidc?: { client_secret?: string; has_client_secret?: boolean };
  };
  if (sso.oidc) {
    sso.oidc.has_client_secret = Boolean(sso.oidc.client_secret);
    delete sso.oidc.client_secret;
  }
  return sso;
}

export function getOrganization(deps: DomainDeps, organizationId: string): OrganizationView {
  const row = deps.db.select().from(organizations).where(eq(organizations.id, organizationId)).get();
  if (!row) throw new NotFoundError("organization");
  const userCount =
    deps.db
      .select({ value: count() })
      .from(users)
      .where(and(eq(users.organizationId, organizationId), isNull(users.deletedAt)))
      .get()?.value ?? 0;
  return {
    id: row.id,
    name: row.name,
    plan: row.plan,
    default_policy_id: row.defaultPolicyId,
    device_count: row.deviceCount,
    user_count: userCount,
    sso: redactSso(row.ssoSettings),
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}

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
