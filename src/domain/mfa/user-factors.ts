import { and, eq, isNotNull } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { mfaMethods, recoveryCodes, users } from "../../db/schema";
import type { MfaMethodView } from "./mfa-view";
import { toMfaMethodView } from "./mfa-view";

export function isMfaEnabled(db: DbOrTx, userId: string): boolean {
  return db.select({ flag: users.mfaEnabled }).from(users).where(eq(users.id, userId)).get()?.flag === true;
}

/** A user's confirmed factors, oldest first. */
export function confirmedMethods(db: DbOrTx, userId: string) {
  return db
    .select()
    .from(mfaMethods)
    .where(and(eq(mfaMethods.userId, userId), isNotNull(mfaMethods.confirmedAt)))
    .orderBy(mfaMethods.createdAt, mfaMethods.id)
    .all();
}

export function confirmedMethodViews(db: DbOrTx, userId: string): MfaMethodView[] {
  return confirmedMethods(db, userId).map(toMfaMethodView);
}

/** The factor types a user can answer a sign-in challenge with. */
export function methodTypes(db: DbOrTx, userId: string): ("totp" | "webauthn")[] {
  const types = new Set(confirmedMethods(db, userId).map((method) => method.type));
  return (["totp", "webauthn"] as const).filter((type) => types.has(type));
}

/**
 * Brings `users.mfa_enabled` in line with the user's confirmed factors (the flag is read on every
 * request); without a factor, recovery codes go too. Returns whether MFA was just turned on.
 */
export function syncMfaEnabled(tx: DbOrTx, userId: string): { isEnabled: boolean; wasEnabled: boolean } {
  const wasEnabled = tx
    .select({ flag: users.mfaEnabled })
    .from(users)
    .where(eq(users.id, userId))
    .get()?.flag;
  const isEnabled = confirmedMethods(tx, userId).length > 0;
  if (isEnabled !== wasEnabled)
    tx.update(users).set({ mfaEnabled: isEnabled }).where(eq(users.id, userId)).run();
  if (!isEnabled) tx.delete(recoveryCodes).where(eq(recoveryCodes.userId, userId)).run();
  return { isEnabled, wasEnabled: Boolean(wasEnabled) };
}
