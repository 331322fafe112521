import { and, desc, eq, isNull } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { jsonText } from "../../db/dialect";
import { firstRow } from "../../db/first-row";
import { auditLogs, users } from "../../db/tables";
import type { Principal } from "../auth/principal";
import { hasScope } from "../auth/scopes";
import { ForbiddenError, NotFoundError, ValidationError } from "../errors";
import type { UserRow } from "../users/user-view";

/**
 * Whom a data-protection request is about: the caller, or (for an admin) the user named by `user_id`.
 * API keys act only with the admin scope: a narrow key made for automation must not export, erase or
 * restrict the account of the person who created it. A key that changes an account must name it
 * (`mustName`): automation that forgot user_id would otherwise erase or restrict its own creator.
 */
export function gdprSubjectId(
  principal: Principal,
  userId: string | undefined,
  options: { mustName?: boolean } = {},
): string {
  const isAdmin = hasScope(principal.scopes, "admin");
  if (principal.kind === "api_key" && !isAdmin)
    throw new ForbiddenError(
      "api_key_not_allowed",
      "API keys cannot do this",
      "an API key makes data-protection requests only with the admin scope; sign in to act on your own data",
    );
  if (principal.kind === "api_key" && options.mustName && userId === undefined)
    throw new ValidationError("invalid request parameters", [
      {
        field: "user_id",
        message:
          "is required with an API key: name the user the request is about (it may be the key's creator)",
      },
    ]);
  if (userId === undefined || userId === principal.userId) return principal.userId;
  if (!isAdmin)
    throw new ForbiddenError(
      "scope_missing",
      "insufficient permissions",
      "acting for another user needs the admin scope; without user_id a request is about yourself",
    );
  return userId;
}

/** The subject's row and the email it is known by (for a deleted account, the one it had). */
export interface GdprSubject {
  row: UserRow;
  email: string | null;
}

/**
 * The subject in the caller's organization (404 otherwise, and for an erased one). With `allowClosed` a
 * deleted account is found too: a former employee's data is still in audit entries and histories, and
 * an admin can export or erase it.
 */
export async function findGdprSubject(
  db: DbOrTx,
  organizationId: string,
  userId: string,
  options: { allowClosed: boolean },
): Promise<GdprSubject> {
  const row = await firstRow(
    db
      .select()
      .from(users)
      .where(and(eq(users.id, userId), eq(users.organizationId, organizationId), isNull(users.erasedAt))),
  );
  if (!row || (row.deletedAt && !options.allowClosed)) throw new NotFoundError("user");
  return { row, email: row.deletedAt ? await formerEmail(db, organizationId, userId) : row.email };
}

/** A deleted account's email is freed for reuse; the user.delete audit entry remembers it. */
async function formerEmail(db: DbOrTx, organizationId: string, userId: string): Promise<string | null> {
  const entry = await firstRow(
    db
      .select({ email: jsonText(db, auditLogs.details, ["email"]) })
      .from(auditLogs)
      .where(
        and(
          eq(auditLogs.organizationId, organizationId),
          eq(auditLogs.action, "user.delete"),
          eq(auditLogs.targetId, userId),
        ),
      )
      .orderBy(desc(auditLogs.createdAt))
      .limit(1),
  );
  return entry?.email ?? null;
}
