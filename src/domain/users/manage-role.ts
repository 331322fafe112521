import type { Principal } from "../auth/principal";
import { hasScope, ROLE_SCOPES, type Role } from "../auth/scopes";
import { ForbiddenError } from "../errors";

/**
 * A caller may only hand out a role, or manage a user holding one, whose scopes it has itself: otherwise
 * an API key with users:write could create an admin and sign in as it.
 */
export function assertCanManageRole(principal: Principal, role: Role): void {
  const missing = ROLE_SCOPES[role].filter((scope) => !hasScope(principal.scopes, scope));
  if (missing.length > 0) {
    throw new ForbiddenError(
      "scope_missing",
      "insufficient permissions",
      `managing the role ${role} needs scopes you do not have: ${missing.join(", ")}`,
    );
  }
}
