import { randomBytes } from "node:crypto";
import { and, eq } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { firstRow } from "../../db/first-row";
import type { SSO_PROVIDERS } from "../../db/schema/enums";
import { ssoIdentities, users } from "../../db/tables";
import { toIso } from "../../lib/clock";
import { hashPassword } from "../../lib/secrets";
import { recordAudit } from "../audit/record-audit";
import type { AuthDeps } from "../auth/auth-deps";
import type { TokenPair } from "../auth/issue-session";
import { type SignedInUser, startSession, toSignedInUser } from "../auth/sign-in";
import type { Actor } from "../deps";
import { type DomainError, UnauthenticatedError } from "../errors";
import { insertUser } from "../users/insert-user";
import { passwordHashCost } from "../users/password-hash-cost";
import type { UserRow } from "../users/user-view";
import { discoverableDomainOwner } from "./sso-domains";

export type SsoProvider = (typeof SSO_PROVIDERS)[number];

/** Who the identity provider says signed in. */
export interface SsoIdentity {
  provider: SsoProvider;
  /** The ID token's `iss`, or the SAML IdP's entity ID: the subject means something only at its issuer. */
  issuer: string;
  /** OIDC `sub`, SAML NameID: stable at the provider. */
  subject: string;
  email: string | null;
  /** OIDC `email_verified`; a SAML assertion signed by the organization's own IdP counts as verified. */
  emailVerified: boolean;
  name: string | null;
}

/** The connection settings that decide linking and provisioning. */
export interface SsoUserRules {
  allowed_domains: string[];
  auto_provision: boolean;
  default_role: UserRow["role"];
}

function anonymousActor(organizationId: string, identity: SsoIdentity, ip: string): Actor {
  return { type: "anonymous", id: null, label: identity.email ?? identity.subject, organizationId, ip };
}

/** Writes the audit row of a refused SSO sign-in; returns its error, for the caller to throw. */
export async function auditSsoRefusal(
  deps: AuthDeps,
  organizationId: string,
  provider: SsoProvider,
  label: string | null,
  ip: string,
  error: DomainError,
  targetUserId: string | null = null,
): Promise<DomainError> {
  await withTransaction(
    deps.db,
    async (tx) =>
      await recordAudit(
        tx,
        deps.clock.now(),
        { type: "anonymous", id: null, label, organizationId, ip },
        {
          action: "auth.sso_login",
          outcome: "failure",
          targetType: "user",
          targetId: targetUserId,
          details: { provider, reason: error.reason, ...(error.details ? { details: error.details } : {}) },
        },
      ),
  );
  return error;
}

/**
 * Opens a session for the user an identity provider vouched for (`resolveSsoUser`), exactly as a password
 * sign-in's, without the local MFA challenge: the identity provider owns the second factor.
 */
export async function signInWithSsoIdentity(
  deps: AuthDeps,
  organizationId: string,
  rules: SsoUserRules,
  identity: SsoIdentity,
  ip: string,
): Promise<{ tokens: TokenPair; user: SignedInUser }> {
  const account = await resolveSsoUser(deps, organizationId, rules, identity, ip);
  return startSsoSession(deps, account, identity.provider, ip, { subject: identity.subject });
}

/** A session for a user an identity provider vouched for, audited with the provider. */
export async function startSsoSession(
  deps: AuthDeps,
  account: UserRow,
  provider: SsoProvider,
  ip: string,
  auditDetails: Record<string, unknown> = {},
): Promise<{ tokens: TokenPair; user: SignedInUser }> {
  const tokens = await startSession(deps, account, ip, "sso", { provider, ...auditDetails });
  return { tokens, user: toSignedInUser(account) };
}

/**
 * The user an identity provider vouched for: matched by (organization, provider, subject); the first
 * time linked by verified email to a user of the organization, or created with the connection's
 * default_role when auto_provision is on and the email's domain is allowed. Disabled or restricted users
 * are refused (audited).
 */
export async function resolveSsoUser(
  deps: AuthDeps,
  organizationId: string,
  rules: SsoUserRules,
  identity: SsoIdentity,
  ip: string,
): Promise<UserRow> {
  const refuse = (error: DomainError, userId: string | null = null): Promise<DomainError> =>
    auditSsoRefusal(
      deps,
      organizationId,
      identity.provider,
      identity.email ?? identity.subject,
      ip,
      error,
      userId,
    );
  const linked = (
    await firstRow(
      deps.db
        .select({ user: users })
        .from(ssoIdentities)
        .innerJoin(users, eq(users.id, ssoIdentities.userId))
        .where(
          and(
            eq(ssoIdentities.organizationId, organizationId),
            eq(ssoIdentities.provider, identity.provider),
            eq(ssoIdentities.issuer, identity.issuer),
            eq(ssoIdentities.subject, identity.subject),
          ),
        ),
    )
  )?.user;
  let user: UserRow | undefined = linked && !linked.deletedAt ? linked : undefined;
  let how: "matched" | "linked" | "provisioned" = "matched";
  if (!user) {
    const email = identity.email?.trim().toLowerCase() ?? "";
    if (!email)
      throw await refuse(
        new UnauthenticatedError(
          "sso_email_not_verified",
          "single sign-on failed",
          "email: the identity provider sent no email address, and this account is not linked yet",
        ),
      );
    if (!identity.emailVerified)
      throw await refuse(
        new UnauthenticatedError(
          "sso_email_not_verified",
          "single sign-on failed",
          `email_verified: the identity provider has not verified ${email}, so it cannot be linked to or create an account`,
        ),
      );
    const emailTaken = () =>
      refuse(
        new UnauthenticatedError(
          "sso_email_taken",
          "single sign-on failed",
          `email: ${email} cannot be linked to an account of this organization`,
        ),
      );
    const existing = await firstRow(deps.db.select().from(users).where(eq(users.email, email)));
    if (existing && existing.organizationId !== organizationId) throw await emailTaken();
    if (existing) {
      user = existing;
      how = "linked";
    } else {
      const domain = email.slice(email.lastIndexOf("@") + 1);
      // New accounts of a domain only in the organization whose claim on it holds: confirmed by the
      // operator, or the installation's only organization (a tenant cannot squat another's domain).
      if (
        !rules.auto_provision ||
        !rules.allowed_domains.includes(domain) ||
        (await discoverableDomainOwner(deps.db, domain)) !== organizationId
      )
        throw await refuse(
          new UnauthenticatedError(
            "sso_domain_not_allowed",
            "single sign-on failed",
            !rules.auto_provision
              ? `email: no user has the email ${email}, and auto_provision is off`
              : rules.allowed_domains.includes(domain)
                ? `email: no user has the email ${email}, and new accounts of ${domain} need the operator to confirm the domain for this organization (bulwark org sso-domain add)`
                : `email: ${domain} is not in this connection's allowed_domains, and no user has the email ${email}`,
          ),
        );
      // Nobody knows this password: the account signs in through its identity provider.
      const passwordHash = await hashPassword(randomBytes(32).toString("base64url"), passwordHashCost(deps));
      const provisioned = await withTransaction(deps.db, async (tx) => {
        // A sign-in of the same person at the same moment (two tabs, a double click) may have created
        // the account since it was looked up: then this one signs in to it.
        const meanwhile = await firstRow(tx.select().from(users).where(eq(users.email, email)));
        if (meanwhile) return { row: meanwhile, isNew: false };
        const row = await insertUser(tx, deps.clock.now(), {
          organizationId,
          email,
          name: identity.name?.trim().slice(0, 200) || email.slice(0, email.indexOf("@")),
          role: rules.default_role,
          passwordHash,
        });
        await recordAudit(tx, deps.clock.now(), anonymousActor(organizationId, identity, ip), {
          action: "user.create",
          targetType: "user",
          targetId: row.id,
          details: { email: row.email, role: row.role, provisioned_by: identity.provider },
        });
        return { row, isNew: true };
      });
      if (provisioned.row.organizationId !== organizationId) throw await emailTaken();
      user = provisioned.row;
      // The concurrent sign-in that created the account links it and audits both.
      how = provisioned.isNew ? "provisioned" : "matched";
    }
  }
  const account = user as UserRow;
  if (account.isDisabled || account.isRestricted)
    throw await refuse(
      new UnauthenticatedError(
        account.isDisabled ? "account_disabled" : "account_restricted",
        account.isDisabled ? "account disabled" : "account restricted",
        `the Bulwark account ${account.email} is ${account.isDisabled ? "disabled" : "restricted"}; an administrator can change that`,
      ),
      account.id,
    );
  const now = toIso(deps.clock.now());
  await withTransaction(deps.db, async (tx) => {
    await tx
      .insert(ssoIdentities)
      .values({
        organizationId,
        provider: identity.provider,
        issuer: identity.issuer,
        subject: identity.subject,
        userId: account.id,
        createdAt: now,
        lastSignInAt: now,
      })
      .onConflictDoUpdate({
        target: [
          ssoIdentities.organizationId,
          ssoIdentities.provider,
          ssoIdentities.issuer,
          ssoIdentities.subject,
        ],
        // A link to a user deleted since moves to the account found now.
        set: { userId: account.id, lastSignInAt: now },
      });
    if (how !== "matched")
      await recordAudit(tx, deps.clock.now(), anonymousActor(organizationId, identity, ip), {
        action: "user.sso_link",
        targetType: "user",
        targetId: account.id,
        details: { provider: identity.provider, subject: identity.subject, account: how },
      });
  });
  return account;
}
