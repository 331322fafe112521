import { withTransaction } from "../../db/client";
import { hashPassword } from "../../lib/secrets";
import { recordAudit } from "../audit/record-audit";
import type { Principal } from "../auth/principal";
import type { Role } from "../auth/scopes";
import type { Actor, DomainDeps } from "../deps";
import { insertUser } from "./insert-user";
import { assertCanManageRole } from "./manage-role";
import { passwordHashCost } from "./password-hash-cost";
import { assertPasswordStrength } from "./password-rules";
import { toUserView, type UserView } from "./user-view";

export async function createUser(
  deps: DomainDeps,
  principal: Principal,
  actor: Actor,
  input: { email: string; name: string; role: Role; password: string },
): Promise<UserView> {
  const organizationId = principal.organizationId;
  assertCanManageRole(principal, input.role);
  assertPasswordStrength(input.password, "password");
  const passwordHash = await hashPassword(input.password, passwordHashCost(deps));
  const now = deps.clock.now();
  return await withTransaction(deps.db, async (tx) => {
    const row = await insertUser(tx, now, {
      organizationId,
      email: input.email,
      name: input.name,
      role: input.role,
      passwordHash,
    });
    await recordAudit(tx, now, actor, {
      action: "user.create",
      targetType: "user",
      targetId: row.id,
      details: { email: row.email, role: row.role },
    });
    return toUserView(row);
  });
}
