import { type Tx, withTransaction } from "../../db/client";
import { anonymiseAuditEntries } from "../audit/anonymise-audit-entries";
import { endUserAccess, userApiKeyIds } from "../auth/end-user-access";
import type { Principal } from "../auth/principal";
import type { Actor, DomainDeps } from "../deps";
import { eraseUserFromDevices } from "../devices/erase-user-from-devices";
import { ConflictError } from "../errors";
import { deleteUserFactors } from "../mfa/delete-user-factors";
import { eraseEmailFromPolicyHistory } from "../policies/erase-email-from-history";
import { unlinkUserIdentities } from "../sso/unlink-user-identities";
import { anonymiseUser } from "../users/gdpr-account-state";
import { isLastActingAdmin } from "../users/last-admin";
import { forgetRequestReasons, type GdprRequestView, recordGdprRequest } from "./gdpr-request";
import { findGdprSubject, gdprSubjectId } from "./gdpr-subject";

export const LAST_ADMIN_ERASURE =
  "the last admin of an organization who can act cannot be erased: make another user admin first (or enable, or lift the restriction of, an existing one)";

/**
 * Erases a user (GDPR article 17). In one transaction: every session, refresh token and API key ends
 * (the next request with any of them is a 401); second factors, SSO links and sign-in lockouts are
 * deleted; devices stay enrolled but unassigned; the user row becomes an anonymous stub (its id stays
 * so the audit trail holds together); and everything else that named the person loses it: audit
 * entries keep their actor and target ids but not the email, name or address, and the email in policy
 * histories, wipe records, enrollment tokens and device logs becomes "erased user <id>". Events carry
 * ids, not emails (their schemas say so), and are left as they are. The last admin is refused (409), and the refusal recorded.
 */
export async function eraseUser(
  deps: DomainDeps,
  principal: Principal,
  actor: Actor,
  userId: string | undefined,
): Promise<GdprRequestView> {
  const subjectId = gdprSubjectId(principal, userId, { mustName: true });
  const isSelf = subjectId === principal.userId;
  const organizationId = principal.organizationId;
  const now = deps.clock.now();
  const answer = await withTransaction(deps.db, async (tx) => {
    const { row, email } = await findGdprSubject(tx, organizationId, subjectId, { allowClosed: !isSelf });
    if (await isLastActingAdmin(tx, row)) {
      await recordGdprRequest(tx, now, actor, {
        organizationId,
        userId: row.id,
        type: "erasure",
        status: "rejected",
        result: LAST_ADMIN_ERASURE,
      });
      return null;
    }
    const details = await eraseAccount(tx, now, organizationId, row.id, email);
    // The person asking for their own erasure is not named in the entry that records it.
    const recordedActor = isSelf ? { ...actor, label: null, ip: null } : actor;
    return await recordGdprRequest(tx, now, recordedActor, {
      organizationId,
      userId: row.id,
      type: "erasure",
      status: "completed",
      result:
        "erased: sessions, tokens and API keys revoked, second factors and SSO links deleted, devices unassigned, " +
        "personal data removed from the account, the audit trail and the histories",
      details,
    });
  });
  if (!answer) throw new ConflictError("last_admin", LAST_ADMIN_ERASURE);
  return answer;
}

async function eraseAccount(
  tx: Tx,
  now: Date,
  organizationId: string,
  userId: string,
  email: string | null,
): Promise<Record<string, number>> {
  const replacement = `erased user ${userId}`;
  const actorIds = [userId, ...(await userApiKeyIds(tx, userId))];
  const details = {
    ...(await endUserAccess(tx, now, userId, email)),
    devices_unassigned: await eraseUserFromDevices(tx, now, organizationId, userId, email, replacement),
    mfa_methods_deleted: await deleteUserFactors(tx, userId),
    sso_links_deleted: await unlinkUserIdentities(tx, userId),
    audit_entries_anonymised: await anonymiseAuditEntries(
      tx,
      organizationId,
      userId,
      actorIds,
      email,
      replacement,
    ),
  };
  if (email) await eraseEmailFromPolicyHistory(tx, organizationId, email, replacement);
  await forgetRequestReasons(tx, userId);
  await anonymiseUser(tx, now, userId);
  return details;
}
