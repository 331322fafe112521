import { withTransaction } from "../../db/client";
import type { Principal } from "../auth/principal";
import { revokeUserSessions } from "../auth/sign-out";
import type { Actor, DomainDeps } from "../deps";
import { ConflictError } from "../errors";
import { markUserRestricted } from "../users/gdpr-account-state";
import { isLastActingAdmin } from "../users/last-admin";
import { type GdprRequestView, recordGdprRequest } from "./gdpr-request";
import { findGdprSubject, gdprSubjectId } from "./gdpr-subject";

export const LAST_ADMIN_RESTRICTION =
  "the last admin of an organization who can act cannot be restricted: no admin would be left to lift it; make another user admin first (or enable, or lift the restriction of, an existing one)";

/**
 * Restricts a user's processing (GDPR article 18): the account cannot sign in (password, SSO or its API
 * keys, which fail while it lasts and work again after), its sessions end now, and its devices' activity
 * logs keep events and times only. Its data stays. An admin lifts it with PATCH /users/:id
 * {restricted: false}. The last admin is refused (409): nobody could lift it.
 */
export async function restrictUser(
  deps: DomainDeps,
  principal: Principal,
  actor: Actor,
  userId: string | undefined,
): Promise<GdprRequestView> {
  const subjectId = gdprSubjectId(principal, userId, { mustName: true });
  const organizationId = principal.organizationId;
  const now = deps.clock.now();
  const answer = await withTransaction(deps.db, async (tx) => {
    const { row } = await findGdprSubject(tx, organizationId, subjectId, { allowClosed: false });
    const outcome = { organizationId, userId: row.id, type: "restriction" as const };
    if (await isLastActingAdmin(tx, row)) {
      await recordGdprRequest(tx, now, actor, {
        ...outcome,
        status: "rejected",
        result: LAST_ADMIN_RESTRICTION,
      });
      return null;
    }
    if (row.isRestricted)
      return await recordGdprRequest(tx, now, actor, {
        ...outcome,
        status: "completed",
        result: "the account was already restricted; it stays so until an admin lifts it",
      });
    await markUserRestricted(tx, now, row.id);
    const sessionsRevoked = await revokeUserSessions(tx, now, row.id, "processing restricted");
    return await recordGdprRequest(tx, now, actor, {
      ...outcome,
      status: "completed",
      result:
        "restricted: no sign-in (password, SSO or API keys) and no processing beyond storage until an admin " +
        `lifts it with PATCH /api/v1/users/${row.id} {"restricted": false}`,
      details: { sessions_revoked: sessionsRevoked },
    });
  });
  if (!answer) throw new ConflictError("last_admin", LAST_ADMIN_RESTRICTION);
  return answer;
}
