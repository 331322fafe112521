import { count, eq } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { organizations, users } from "../../db/schema";
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

/**
 * Creates an admin in organization `org` (created if no organization has that name). Used by
 * `bulwark admin create` and by the first run of `serve`.
 */
export async function createAdmin(
  deps: DomainDeps,
  input: { email: string; password: string; name?: string; org: string },
): Promise<{ userId: string; organizationId: string; organizationCreated: boolean }> {
  if (input.password.length < MIN_PASSWORD_LENGTH) {
    throw new ValidationError(`password must be at least ${MIN_PASSWORD_LENGTH} characters`);
  }
  const passwordHash = await hashPassword(input.password, passwordHashCost(deps));
  const now = deps.clock.now();
  return withTransaction(deps.db, (tx) => {
    const existing = tx
      .select({ id: organizations.id })
      .from(organizations)
      .where(eq(organizations.name, input.org))
      .get();
    const organizationId = existing?.id ?? createOrganization(tx, now, { name: input.org }).id;
    const user = insertUser(tx, now, {
      organizationId,
      email: input.email,
      name: input.name ?? "Administrator",
      role: "admin",
      passwordHash,
    });
    recordAudit(tx, now, systemActor(organizationId), {
      action: "user.create",
      targetType: "user",
      targetId: user.id,
      details: { email: user.email, role: "admin" },
    });
    return { userId: user.id, organizationId, organizationCreated: !existing };
  });
}

/**
 * First run: when the database has no user at all, creates the configured admin, or
 * admin@bulwark.local with a random password that is returned so `serve` can print it once.
 */
export async function ensureFirstAdmin(
  deps: DomainDeps,
): Promise<{ email: string; password: string | null } | null> {
  const userCount = deps.db.select({ value: count() }).from(users).get()?.value ?? 0;
  if (userCount > 0) return null;
  const { email, password, org } = deps.config.admin;
  const chosenPassword = password || generatePassword();
  await createAdmin(deps, { email: email || FIRST_RUN_EMAIL, password: chosenPassword, org });
  return { email: email || FIRST_RUN_EMAIL, password: password ? null : chosenPassword };
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
