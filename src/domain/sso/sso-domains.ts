import { type Static, Type } from "@sinclair/typebox";
import { and, asc, count, eq, inArray, isNull, ne, notInArray, or } from "drizzle-orm";
import { type DbOrTx, withTransaction } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { organizations, ssoDomains } from "../../db/tables";
import { toIso } from "../../lib/clock";
import { recordAudit } from "../audit/record-audit";
import { type DomainDeps, systemActor } from "../deps";
import { ConflictError, NotFoundError, ValidationError } from "../errors";
import { readStoredSso, type StoredSso } from "./sso-settings-view";

/** Who confirmed a claim: the operator, or the installation itself while it had one organization. */
const OPERATOR = "operator";
const SINGLE_ORGANIZATION = "single organization";

export const SsoDomainSchema = Type.Object(
  {
    domain: Type.String(),
    confirmed: Type.Boolean({
      description:
        "Confirmed for this organization by the installation's operator (bulwark org sso-domain add), or claimed while it was the installation's only organization",
    }),
    discoverable: Type.Boolean({
      description:
        "Whether single sign-on discovery sends people of this domain to this organization: always on an installation of one organization, else only once confirmed",
    }),
  },
  { title: "SsoDomain" },
);

export type SsoDomainView = Static<typeof SsoDomainSchema>;

/** Every domain the SSO settings list, OIDC's and SAML's, once each. */
export function listedSsoDomains(sso: StoredSso): string[] {
  return [...new Set([...(sso.oidc?.allowed_domains ?? []), ...(sso.saml?.allowed_domains ?? [])])];
}

async function isSingleOrganization(db: DbOrTx): Promise<boolean> {
  return ((await firstRow(db.select({ total: count() }).from(organizations)))?.total ?? 0) <= 1;
}

/**
 * Makes the organization's claims the domains its SSO settings list, in the caller's transaction: a
 * domain another organization claims is refused (409 sso_domain_taken; which organization is not
 * said), a new one is claimed, and one no longer listed is let go unless the operator confirmed it. A
 * claim made while the installation has this one organization is confirmed by that fact (nobody else
 * could have claimed anything), so it stays discoverable when a second organization arrives.
 */
export async function claimSsoDomains(
  tx: DbOrTx,
  now: Date,
  organizationId: string,
  domains: string[],
): Promise<void> {
  if (domains.length > 0) {
    const taken = (
      await tx
        .select({ domain: ssoDomains.domain })
        .from(ssoDomains)
        .where(and(inArray(ssoDomains.domain, domains), ne(ssoDomains.organizationId, organizationId)))
    )
      .map((row) => row.domain)
      .sort();
    if (taken.length > 0)
      throw new ConflictError(
        "sso_domain_taken",
        "an email domain is claimed by another organization",
        `allowed_domains: ${taken.join(", ")} ${taken.length === 1 ? "is" : "are"} claimed by another organization of this installation; a domain signs in with one organization only (the operator of the installation can move it: bulwark org sso-domain)`,
      );
  }
  await tx
    .delete(ssoDomains)
    .where(
      and(
        eq(ssoDomains.organizationId, organizationId),
        domains.length > 0 ? notInArray(ssoDomains.domain, domains) : undefined,
        or(isNull(ssoDomains.confirmedBy), ne(ssoDomains.confirmedBy, OPERATOR)),
      ),
    );
  const isConfirmed = await isSingleOrganization(tx);
  for (const domain of domains)
    await tx
      .insert(ssoDomains)
      .values({
        domain,
        organizationId,
        confirmedAt: isConfirmed ? toIso(now) : null,
        confirmedBy: isConfirmed ? SINGLE_ORGANIZATION : null,
        createdAt: toIso(now),
      })
      .onConflictDoNothing();
}

/**
 * The organization whose single sign-on people of `domain` use, or null: its claim, if confirmed or the
 * installation has one organization. Discovery sends them there, and only there are new accounts of the
 * domain created on their first sign-in.
 */
export async function discoverableDomainOwner(db: DbOrTx, domain: string): Promise<string | null> {
  const claim = await firstRow(db.select().from(ssoDomains).where(eq(ssoDomains.domain, domain)));
  if (!claim) return null;
  return claim.confirmedAt !== null || (await isSingleOrganization(db)) ? claim.organizationId : null;
}

/** The organization's claimed domains, as its settings show them. */
export async function organizationSsoDomains(db: DbOrTx, organizationId: string): Promise<SsoDomainView[]> {
  const isSingle = await isSingleOrganization(db);
  return (
    await db
      .select()
      .from(ssoDomains)
      .where(eq(ssoDomains.organizationId, organizationId))
      .orderBy(asc(ssoDomains.domain))
  ).map((row) => ({
    domain: row.domain,
    confirmed: row.confirmedAt !== null,
    discoverable: row.confirmedAt !== null || isSingle,
  }));
}

async function findOrganization(db: DbOrTx, organization: string) {
  const row = await firstRow(
    db
      .select({ id: organizations.id, name: organizations.name })
      .from(organizations)
      .where(or(eq(organizations.id, organization), eq(organizations.name, organization))),
  );
  if (!row) throw new NotFoundError("organization", `no organization has the id or name "${organization}"`);
  return row;
}

/** A domain as claims hold it: lower case, a host name of at least two labels. */
function normalizeDomain(domain: string): string {
  const normalized = domain.trim().toLowerCase();
  const label = "[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?";
  if (normalized.length > 253 || !new RegExp(`^(?:${label}\\.)+${label}$`).test(normalized))
    throw new ValidationError("invalid domain", [
      { field: "domain", message: "must be an email domain such as example.com", received: domain },
    ]);
  return normalized;
}

/**
 * The operator confirms that people of `domain` sign in with `organization` (named by id or name):
 * claimed for it if nobody claims it, confirmed if it claims it; 409 naming the organization that
 * claims it otherwise (the operator sees every tenant, and moves a domain by removing it first).
 */
export async function confirmSsoDomain(
  deps: DomainDeps,
  input: { organization: string; domain: string },
): Promise<{ organizationId: string; organizationName: string; domain: string; wasClaimed: boolean }> {
  const domain = normalizeDomain(input.domain);
  const now = deps.clock.now();
  return await withTransaction(deps.db, async (tx) => {
    const organization = await findOrganization(tx, input.organization);
    const claim = await firstRow(tx.select().from(ssoDomains).where(eq(ssoDomains.domain, domain)));
    if (claim && claim.organizationId !== organization.id) {
      const holder = await firstRow(
        tx
          .select({ name: organizations.name })
          .from(organizations)
          .where(eq(organizations.id, claim.organizationId)),
      );
      throw new ConflictError(
        "sso_domain_taken",
        "the domain is claimed by another organization",
        `${domain} is claimed by "${holder?.name}" (${claim.organizationId}); remove it there first: bulwark org sso-domain remove --org ${claim.organizationId} ${domain}`,
      );
    }
    await tx
      .insert(ssoDomains)
      .values({
        domain,
        organizationId: organization.id,
        confirmedAt: toIso(now),
        confirmedBy: OPERATOR,
        createdAt: toIso(now),
      })
      .onConflictDoUpdate({
        target: ssoDomains.domain,
        set: { confirmedAt: toIso(now), confirmedBy: OPERATOR },
      });
    await recordAudit(tx, now, systemActor(organization.id), {
      action: "organization.sso_domain_confirm",
      targetType: "organization",
      targetId: organization.id,
      details: { domain, was_claimed: claim !== undefined },
    });
    return {
      organizationId: organization.id,
      organizationName: organization.name,
      domain,
      wasClaimed: claim !== undefined,
    };
  });
}

/**
 * The operator takes a domain from an organization: the claim goes, and so does the domain from its
 * connections' allowed_domains (else its next SSO change would claim it again, or be refused once
 * another organization has it). 404 when it holds none.
 */
export async function removeSsoDomain(
  deps: DomainDeps,
  input: { organization: string; domain: string },
): Promise<{ organizationId: string; organizationName: string; domain: string }> {
  const domain = normalizeDomain(input.domain);
  const now = deps.clock.now();
  return await withTransaction(deps.db, async (tx) => {
    const organization = await findOrganization(tx, input.organization);
    const removed = await tx
      .delete(ssoDomains)
      .where(and(eq(ssoDomains.domain, domain), eq(ssoDomains.organizationId, organization.id)))
      .returning({ domain: ssoDomains.domain });
    if (removed.length === 0)
      throw new NotFoundError("sso domain", `${organization.name} holds no claim on ${domain}`);
    const row = await firstRow(
      tx
        .select({ ssoSettings: organizations.ssoSettings })
        .from(organizations)
        .where(eq(organizations.id, organization.id)),
    );
    const sso = readStoredSso(row?.ssoSettings ?? {});
    for (const connection of [sso.oidc, sso.saml])
      if (connection)
        connection.allowed_domains = connection.allowed_domains.filter((listed) => listed !== domain);
    await tx
      .update(organizations)
      .set({ ssoSettings: sso as Record<string, unknown>, updatedAt: toIso(now) })
      .where(eq(organizations.id, organization.id));
    await recordAudit(tx, now, systemActor(organization.id), {
      action: "organization.sso_domain_remove",
      targetType: "organization",
      targetId: organization.id,
      details: { domain },
    });
    return { organizationId: organization.id, organizationName: organization.name, domain };
  });
}

/** Every claim of the installation (or of one organization), for the operator. */
export async function listSsoDomains(
  deps: DomainDeps,
  organization?: string,
): Promise<
  { domain: string; organizationId: string; organizationName: string; confirmedBy: string | null }[]
> {
  const only = organization === undefined ? undefined : (await findOrganization(deps.db, organization)).id;
  return await deps.db
    .select({
      domain: ssoDomains.domain,
      organizationId: ssoDomains.organizationId,
      organizationName: organizations.name,
      confirmedBy: ssoDomains.confirmedBy,
    })
    .from(ssoDomains)
    .innerJoin(organizations, eq(organizations.id, ssoDomains.organizationId))
    .where(only === undefined ? undefined : eq(ssoDomains.organizationId, only))
    .orderBy(asc(ssoDomains.domain));
}
