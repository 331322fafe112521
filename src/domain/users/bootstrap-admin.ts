import { eq } from "drizzle-orm";
import { type DbOrTx, type Tx, withTransaction } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { organizations, users } from "../../db/tables";
import { generatePassword, hashPassword } from "../../lib/secrets";
import { recordAudit } from "../audit/record-audit";
import { type DomainDeps, systemActor } from "../deps";
import { ValidationError } from "../errors";
import { createOrganization } from "../organizations/create-organization";
import { parseEmail } from "./email";
import { insertUser } from "./insert-user";
import { passwordHashCost } from "./password-hash-cost";
import { assertPasswordStrength, MIN_PASSWORD_LENGTH } from "./password-rules";

export const FIRST_RUN_EMAIL = "admin@bulwark.local";

/** What createAdmin did; a new organization's VPN subnet, and whether devices must learn a new server key. */
export interface CreatedAdmin {
  userId: string;
  organizationId: string;
  organizationCreated: boolean;
  /** The new organization's subnet of vpn.address_pool. */
  vpnSubnet?: string;
  /**
   * The organization made the installation multi-organization and the VPN server's key pair in use was
   * replaced: the operator exports the server configuration again and applies it.
   */
  isServerKeyRotated: boolean;
}

/**
 * Creates an admin in organization `org` (created if no organization has that name). Used by
 * `bulwark admin create` and by the first run of `serve`.
 */
export async function createAdmin(
  deps: DomainDeps,
  input: { email: string; password: string; name?: string; org: string },
): Promise<CreatedAdmin> {
  return (await createAdminUnless(deps, input, async () => false)) as CreatedAdmin;
}

/** createAdmin, unless `skip` (asked inside its transaction) says not to: then null and nothing written. */
async function createAdminUnless(
  deps: DomainDeps,
  input: { email: string; password: string; name?: string; org: string },
  skip: (tx: Tx) => Promise<boolean>,
): Promise<CreatedAdmin | null> {
  if (input.password.length < MIN_PASSWORD_LENGTH) {
    throw new ValidationError(`password must be at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  const passwordHash = await hashPassword(input.password, passwordHashCost(deps));
  const now = deps.clock.now();
  return await withTransaction(deps.db, async (tx) => {
    if (await skip(tx)) return null;
    const existing = await firstRow(
      tx.select({ id: organizations.id }).from(organizations).where(eq(organizations.name, input.org)),
    );
    const organization = existing
      ? { id: existing.id, vpnSubnet: null, serverKeyRotation: null }
      : await createOrganization(deps, tx, now, { name: input.org });
    const organizationId = organization.id;
    const user = await insertUser(tx, now, {
      organizationId,
      email: input.email,
      name: input.name ?? "Administrator",
      role: "admin",
      passwordHash,
    });
    await recordAudit(tx, now, systemActor(organizationId), {
      action: "user.create",
      targetType: "user",
      targetId: user.id,
      details: { email: user.email, role: "admin" },
    });
    return {
      userId: user.id,
      organizationId,
      organizationCreated: !existing,
      ...(organization.vpnSubnet ? { vpnSubnet: organization.vpnSubnet } : {}),
      isServerKeyRotated: organization.serverKeyRotation?.isInUse ?? false,
    };
  });
}

/**
 * First run: when the database has no user at all, creates the configured admin, or
 * admin@bulwark.local with a random password that is returned so `serve` can print it once. Servers
 * starting at once on an empty database create one admin between them (the count is read in the
 * creating transaction), and only the one that created it prints its password.
 */
export async function ensureFirstAdmin(
  deps: DomainDeps,
): Promise<{ email: string; password: string | null; isServerKeyRotated: boolean } | null> {
  if (await hasAnyUser(deps.db)) return null;
  const { email, password, org } = deps.config.admin;
  const chosenPassword = password || generatePassword();
  // A database whose users are all gone may still hold another organization than admin.org's.
  const created = await createAdminUnless(
    deps,
    { email: email || FIRST_RUN_EMAIL, password: chosenPassword, org },
    async (tx) => await hasAnyUser(tx),
  );
  if (!created) return null;
  return {
    email: email || FIRST_RUN_EMAIL,
    password: password ? null : chosenPassword,
    isServerKeyRotated: created.isServerKeyRotated,
  };
}

async function hasAnyUser(db: DbOrTx): Promise<boolean> {
  return (await firstRow(db.select({ id: users.id }).from(users).limit(1))) !== undefined;
}

/**
 * The first admin's settings (BULWARK_ADMIN_EMAIL, BULWARK_ADMIN_PASSWORD) checked by the rules of
 * POST /users before `serve` opens the database, naming the variable when one is wrong.
 */
export function checkFirstAdminSettings(admin: { email: string; password: string }): void {
  if (admin.email !== "") parseEmail(admin.email, "admin.email (BULWARK_ADMIN_EMAIL)");
  if (admin.password !== "")
    assertPasswordStrength(admin.password, "admin.password (BULWARK_ADMIN_PASSWORD)");
}
