import { and, eq } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { loginFailures, mfaChallenges, mfaMethods } from "../../db/tables";
import { verifyPassword } from "../../lib/secrets";
import { recordAudit } from "../audit/record-audit";
import {
  clearPasswordAttempts,
  reservePasswordAttempt,
  settleFailedPasswordAttempt,
} from "../auth/login-throttle";
import type { Principal } from "../auth/principal";
import type { Actor, DomainDeps } from "../deps";
import { ConflictError, ForbiddenError, NotFoundError, UnauthenticatedError } from "../errors";
import { assertCanManageRole } from "../users/manage-role";
import { findLiveUser, type UserRow } from "../users/user-view";
import type { MfaStatus } from "./mfa-view";
import { issueRecoveryCodes, remainingRecoveryCodes } from "./recovery-codes";
import { confirmedMethodViews, syncMfaEnabled } from "./user-factors";

/** The caller's factors and how many recovery codes are left. */
export async function getMfaStatus(deps: DomainDeps, principal: Principal): Promise<MfaStatus> {
  const methods = await confirmedMethodViews(deps.db, principal.userId);
  return {
    enabled: methods.length > 0,
    methods,
    recovery_codes_remaining: await remainingRecoveryCodes(deps.db, principal.userId),
  };
}

/** Removes one of the caller's factors after the password; the last one turns MFA off. */
export async function deleteMfaMethod(
  deps: DomainDeps,
  principal: Principal,
  actor: Actor,
  input: { methodId: string; password: string },
): Promise<void> {
  const user = await findLiveUser(deps.db, principal.organizationId, principal.userId);
  const method = await firstRow(
    deps.db
      .select({ id: mfaMethods.id, type: mfaMethods.type, name: mfaMethods.name })
      .from(mfaMethods)
      .where(and(eq(mfaMethods.id, input.methodId), eq(mfaMethods.userId, user.id))),
  );
  if (!method) throw new NotFoundError("MFA method");
  await confirmPassword(deps, actor, user, input.password, "mfa.method_delete");
  const now = deps.clock.now();
  await withTransaction(deps.db, async (tx) => {
    await tx.delete(mfaMethods).where(eq(mfaMethods.id, method.id));
    const { isEnabled } = await syncMfaEnabled(tx, user.id);
    await recordAudit(tx, now, actor, {
      action: "mfa.method_delete",
      targetType: "user",
      targetId: user.id,
      details: { method_id: method.id, type: method.type, name: method.name, mfa_enabled: isEnabled },
    });
  });
}

/** A new set of 10 recovery codes after the password; the old set stops working. */
export async function regenerateRecoveryCodes(
  deps: DomainDeps,
  principal: Principal,
  actor: Actor,
  password: string,
): Promise<{ recovery_codes: string[] }> {
  const notEnabled = () =>
    new ConflictError(
      "mfa_not_enabled",
      "multi-factor authentication is not set up",
      "recovery codes come with the first factor: set up an authenticator app or a passkey",
    );
  const user = await findLiveUser(deps.db, principal.organizationId, principal.userId);
  if (!user.mfaEnabled) throw notEnabled();
  await confirmPassword(deps, actor, user, password, "mfa.recovery_codes_regenerate");
  const now = deps.clock.now();
  return await withTransaction(deps.db, async (tx) => {
    // The last factor may have been removed while the password was checked: asked again in the
    // transaction that writes the codes.
    if (!(await findLiveUser(tx, principal.organizationId, principal.userId)).mfaEnabled) throw notEnabled();
    const codes = await issueRecoveryCodes(tx, deps.secrets, user.id, now);
    await recordAudit(tx, now, actor, {
      action: "mfa.recovery_codes_regenerate",
      targetType: "user",
      targetId: user.id,
    });
    return { recovery_codes: codes };
  });
}

/** An administrator removes every factor of a user (a lost phone); the user signs in with the password. */
export async function resetUserMfa(
  deps: DomainDeps,
  principal: Principal,
  actor: Actor,
  userId: string,
): Promise<void> {
  const user = await findLiveUser(deps.db, principal.organizationId, userId);
  assertCanManageRole(principal, user.role);
  // Your own factors go one at a time, with your password: a borrowed session or a key must not strip them.
  if (user.id === principal.userId)
    throw new ForbiddenError(
      "own_mfa_reset",
      "you cannot reset your own factors here",
      "remove them with DELETE /api/v1/auth/mfa/{method_id} and your password",
    );
  const now = deps.clock.now();
  await withTransaction(deps.db, async (tx) => {
    const removed = await tx
      .delete(mfaMethods)
      .where(eq(mfaMethods.userId, user.id))
      .returning({ id: mfaMethods.id });
    await tx.delete(mfaChallenges).where(eq(mfaChallenges.userId, user.id));
    await syncMfaEnabled(tx, user.id);
    await recordAudit(tx, now, actor, {
      action: "mfa.reset",
      targetType: "user",
      targetId: user.id,
      details: { methods_removed: removed.length },
    });
  });
}

/** An administrator lifts a user's sign-in lockout (from every address) before it runs out. */
export async function clearUserLockout(
  deps: DomainDeps,
  principal: Principal,
  actor: Actor,
  userId: string,
): Promise<void> {
  const user = await findLiveUser(deps.db, principal.organizationId, userId);
  assertCanManageRole(principal, user.role);
  const now = deps.clock.now();
  await withTransaction(deps.db, async (tx) => {
    const cleared = await tx
      .delete(loginFailures)
      .where(eq(loginFailures.email, user.email))
      .returning({ ip: loginFailures.ip });
    await recordAudit(tx, now, actor, {
      action: "user.lockout_clear",
      targetType: "user",
      targetId: user.id,
      details: { addresses: cleared.map((row) => row.ip) },
    });
  });
}

/**
 * The password again before a factor goes or codes change: a borrowed, unlocked session alone cannot
 * take the second factor off. Guarded by the sign-in throttle; a wrong password is a 401.
 */
async function confirmPassword(
  deps: DomainDeps,
  actor: Actor,
  user: UserRow,
  password: string,
  action: string,
): Promise<void> {
  const ip = actor.ip ?? "unknown";
  await reservePasswordAttempt(deps, user.email, ip);
  if (await verifyPassword(password, user.passwordHash)) {
    await withTransaction(deps.db, async (tx) => await clearPasswordAttempts(tx, user.email, ip));
    return;
  }
  await withTransaction(deps.db, async (tx) => {
    await settleFailedPasswordAttempt(deps, tx, user.email, ip);
    await recordAudit(tx, deps.clock.now(), actor, {
      action,
      outcome: "failure",
      targetType: "user",
      targetId: user.id,
      details: { reason: "wrong password" },
    });
  });
  throw new UnauthenticatedError(
    "password_incorrect",
    "incorrect password",
    "password: is not the account's password",
  );
}
