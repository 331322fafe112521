import { eq } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { users } from "../../db/tables";
import { toIso } from "../../lib/clock";
import { hashPassword, verifyPassword } from "../../lib/secrets";
import { recordAudit } from "../audit/record-audit";
import {
  clearPasswordAttempts,
  reservePasswordAttempt,
  settleFailedPasswordAttempt,
} from "../auth/login-throttle";
import type { Principal } from "../auth/principal";
import { revokeUserSessions } from "../auth/sign-out";
import type { Actor, DomainDeps } from "../deps";
import { ForbiddenError, ValidationError } from "../errors";
import { passwordHashCost } from "./password-hash-cost";
import { assertPasswordStrength } from "./password-rules";
import { findLiveUser } from "./user-view";

/** Changes the caller's own password; every other session of the user ends. */
export async function changeOwnPassword(
  deps: DomainDeps,
  principal: Principal,
  actor: Actor,
  input: { currentPassword: string; newPassword: string },
): Promise<void> {
  // A key holder proving the password would turn a narrow key into the whole account.
  if (principal.kind === "api_key")
    throw new ForbiddenError(
      "api_key_not_allowed",
      "API keys cannot change passwords",
      "sign in as the user to change the password",
    );
  const row = await findLiveUser(deps.db, principal.organizationId, principal.userId);
  // The current password is a guessable secret: the sign-in throttle guards it here too.
  const ip = actor.ip ?? "unknown";
  await reservePasswordAttempt(deps, row.email, ip);
  if (!(await verifyPassword(input.currentPassword, row.passwordHash))) {
    await withTransaction(deps.db, async (tx) => {
      await settleFailedPasswordAttempt(deps, tx, row.email, ip);
      await recordAudit(tx, deps.clock.now(), actor, {
        action: "user.password_change",
        outcome: "failure",
        targetType: "user",
        targetId: row.id,
      });
    });
    throw new ValidationError(
      "invalid request body",
      [{ field: "current_password", message: "is not correct" }],
      undefined,
      "current_password_incorrect",
    );
  }
  assertPasswordStrength(input.newPassword, "new_password");
  const passwordHash = await hashPassword(input.newPassword, passwordHashCost(deps));
  const now = deps.clock.now();
  await withTransaction(deps.db, async (tx) => {
    await tx
      .update(users)
      .set({ passwordHash, updatedAt: toIso(now) })
      .where(eq(users.id, row.id));
    await revokeUserSessions(tx, now, row.id, "password changed", principal.sessionId);
    await clearPasswordAttempts(tx, row.email, ip);
    await recordAudit(tx, now, actor, {
      action: "user.password_change",
      targetType: "user",
      targetId: row.id,
    });
  });
}
