import { and, count, eq, isNull } from "drizzle-orm";
import { firstRow } from "../../db/first-row";
import { organizations, users } from "../../db/tables";
import type { DomainDeps } from "../deps";
import { NotFoundError } from "../errors";
import { organizationSsoDomains } from "../sso/sso-domains";
import { ssoSettingsView } from "../sso/sso-settings-view";
import type { OrganizationView } from "./organization-view";

export async function getOrganization(deps: DomainDeps, organizationId: string): Promise<OrganizationView> {
  const row = await firstRow(
    deps.db.select().from(organizations).where(eq(organizations.id, organizationId)),
  );
  if (!row) throw new NotFoundError("organization");
  const userCount =
    (
      await firstRow(
        deps.db
          .select({ value: count() })
          .from(users)
          .where(and(eq(users.organizationId, organizationId), isNull(users.deletedAt))),
      )
    )?.value ?? 0;
  return {
    id: row.id,
    name: row.name,
    plan: row.plan,
    default_policy_id: row.defaultPolicyId,
    device_count: row.deviceCount,
    user_count: userCount,
    require_mfa: row.requireMfa,
    sso: ssoSettingsView(row.ssoSettings, deps.config.server.base_url, row.id),
    sso_domains: await organizationSsoDomains(deps.db, row.id),
    created_at: row.createdAt,
    updated_at: row.updatedAt,
  };
}
