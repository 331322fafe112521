import { and, eq, isNotNull } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { mfaMethods, recoveryCodes, users } from "../../db/tables";
import type { MfaMethodView } from "./mfa-view";
import { toMfaMethodView } from "./mfa-view";

export async function isMfaEnabled(db: DbOrTx, userId: string): Promise<boolean> {
  return (
    (await firstRow(db.select({ flag: users.mfaEnabled }).from(users).where(eq(users.id, userId))))?.flag ===
    true
  );
}

/** A user's confirmed factors, oldest first. */
export async function confirmedMethods(db: DbOrTx, userId: string) {
  return await db
    .select()
    .from(mfaMethods)
    .where(and(eq(mfaMethods.userId, userId), isNotNull(mfaMethods.confirmedAt)))
    .orderBy(mfaMethods.createdAt, mfaMethods.id);
}

export async function confirmedMethodViews(db: DbOrTx, userId: string): Promise<MfaMethodView[]> {
  return (await confirmedMethods(db, userId)).map(toMfaMethodView);
}

/** The factor types a user can answer a sign-in challenge with. */
export async function methodTypes(db: DbOrTx, userId: string): Promise<("totp" | "webauthn")[]> {
  const types = new Set((await confirmedMethods(db, userId)).map((method) => method.type));
  return (["totp", "webauthn"] as const).filter((type) => types.has(type));
}

/**
 * Brings `users.mfa_enabled` in line with the user's confirmed factors (the flag is read on every
 * request); without a factor, recovery codes go too. Returns whether MFA was just turned on.
 */
export async function syncMfaEnabled(
  tx: DbOrTx,
  userId: string,
): Promise<{ isEnabled: boolean; wasEnabled: boolean }> {
  const wasEnabled = (
    await firstRow(tx.select({ flag: users.mfaEnabled }).from(users).where(eq(users.id, userId)))
  )?.flag;
  const isEnabled = (await confirmedMethods(tx, userId)).length > 0;
  if (isEnabled !== wasEnabled)
    await tx.update(users).set({ mfaEnabled: isEnabled }).where(eq(users.id, userId));
  if (!isEnabled) await tx.delete(recoveryCodes).where(eq(recoveryCodes.userId, userId));
  return { isEnabled, wasEnabled: Boolean(wasEnabled) };
}
