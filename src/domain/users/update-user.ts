import { eq } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { users } from "../../db/tables";
import { toIso } from "../../lib/clock";
import { recordAudit } from "../audit/record-audit";
import type { Principal } from "../auth/principal";
import type { Role } from "../auth/scopes";
import { revokeUserSessions } from "../auth/sign-out";
import type { Actor, DomainDeps } from "../deps";
import { ConflictError } from "../errors";
import { countOtherActiveAdmins, LAST_ADMIN } from "./last-admin";
import { assertCanManageRole } from "./manage-role";
import { findLiveUser, toUserView, type UserView } from "./user-view";

export async function updateUser(
  deps: DomainDeps,
  principal: Principal,
  actor: Actor,
  id: string,
  input: { name?: string; role?: Role; disabled?: boolean; restricted?: false },
): Promise<UserView> {
  const organizationId = principal.organizationId;
  const now = deps.clock.now();
  return await withTransaction(deps.db, async (tx) => {
    const row = await findLiveUser(tx, organizationId, id);
    assertCanManageRole(principal, row.role);
    if (input.role !== undefined) assertCanManageRole(principal, input.role);
    const losesAdmin =
      row.role === "admin" &&
      !row.isDisabled &&
      ((input.role !== undefined && input.role !== "admin") || input.disabled === true);
    if (losesAdmin && (await countOtherActiveAdmins(tx, organizationId, id)) === 0)
      throw new ConflictError("last_admin", LAST_ADMIN);
    const next = {
      name: input.name ?? row.name,
      role: input.role ?? row.role,
      isDisabled: input.disabled ?? row.isDisabled,
      // Lifting a restriction (GDPR): setting one is POST /gdpr/restrict, so that it is recorded as a request.
      isRestricted: input.restricted ?? row.isRestricted,
      updatedAt: toIso(now),
    };
    await tx.update(users).set(next).where(eq(users.id, id));
    if (input.disabled === true && !row.isDisabled) await revokeUserSessions(tx, now, id, "user disabled");
    await recordAudit(tx, now, actor, {
      action: "user.update",
      targetType: "user",
      targetId: id,
      details: Object.fromEntries(Object.entries(input).filter(([, value]) => value !== undefined)),
    });
    return toUserView({ ...row, ...next });
  });
}
