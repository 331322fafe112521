import { eq } from "drizzle-orm";
import { type DbOrTx, withTransaction } from "../../db/client";
import { users } from "../../db/tables";
import { toIso } from "../../lib/clock";
import { recordAudit } from "../audit/record-audit";
import type { Principal } from "../auth/principal";
import { revokeUserApiKeys } from "../auth/revoke-user-api-keys";
import { revokeUserSessions } from "../auth/sign-out";
import type { Actor, DomainDeps } from "../deps";
import { unassignUserDevices } from "../devices/unassign-user-devices";
import { ConflictError } from "../errors";
import { countOtherActiveAdmins, LAST_ADMIN } from "./last-admin";
import { assertCanManageRole } from "./manage-role";
import { findLiveUser } from "./user-view";

/** Deletes a user: the account is closed, its sessions and API keys end, its devices become unassigned. */
export async function deleteUser(
  deps: DomainDeps,
  principal: Principal,
  actor: Actor,
  id: string,
): Promise<void> {
  const organizationId = principal.organizationId;
  const now = deps.clock.now();
  await withTransaction(deps.db, async (tx) => {
    const row = await findLiveUser(tx, organizationId, id);
    assertCanManageRole(principal, row.role);
    if (
      row.role === "admin" &&
      !row.isDisabled &&
      (await countOtherActiveAdmins(tx, organizationId, id)) === 0
    ) {
      throw new ConflictError("last_admin", LAST_ADMIN);
    }
    await closeAccount(tx, now, row.id);
    await recordAudit(tx, now, actor, {
      action: "user.delete",
      targetType: "user",
      targetId: id,
      details: { email: row.email },
    });
  });
}

/** Frees the email, ends sessions and keys, unassigns devices; the row stays for the audit trail. */
export async function closeAccount(tx: DbOrTx, now: Date, userId: string): Promise<void> {
  const timestamp = toIso(now);
  await tx
    .update(users)
    .set({
      deletedAt: timestamp,
      updatedAt: timestamp,
      email: `deleted-${userId}@deleted.invalid`,
      name: "Deleted user",
    })
    .where(eq(users.id, userId));
  await revokeUserSessions(tx, now, userId, "user deleted");
  await revokeUserApiKeys(tx, now, userId);
  await unassignUserDevices(tx, now, userId);
}
