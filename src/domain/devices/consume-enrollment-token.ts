import { and, eq, isNull, lt, or, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { takeTurn } from "../../db/dialect";
import { firstRow } from "../../db/first-row";
import { enrollmentTokens, organizations } from "../../db/tables";
import { hashSecret } from "../../lib/secrets";
import { UnauthenticatedError } from "../errors";
import { type EnrollmentTokenRow, type EnrollmentTokenState, stateOf } from "./enrollment-token-view";

/**
 * Counts one use of an enrollment token inside the enrollment transaction, or refuses it (401 saying
 * why). The increment is guarded by max_uses in SQL, so concurrent enrollments cannot overuse a token.
 * The transaction runs READ COMMITTED and takes the organization's enrollment turn (takeTurn) first.
 */
export async function consumeEnrollmentToken(
  tx: DbOrTx,
  now: Date,
  token: string,
): Promise<EnrollmentTokenRow> {
  const row = await firstRow(
    tx
      .select()
      .from(enrollmentTokens)
      .where(eq(enrollmentTokens.tokenHash, hashSecret(token))),
  );
  if (!row) throw unknownToken();
  const state = stateOf(row, now);
  if (state !== "active") throw refusal(state);
  // An organization's enrollments, on every server, one at a time from here: its token uses, its lowest
  // free VPN address and its hardware ids are then read as the previous enrollment left them.
  await takeTurn(tx, `bulwark:enroll:${row.organizationId}`);
  const used = await firstRow(
    tx
      .update(enrollmentTokens)
      .set({ uses: sql`${enrollmentTokens.uses} + 1` })
      .where(
        and(
          eq(enrollmentTokens.id, row.id),
          isNull(enrollmentTokens.revokedAt),
          or(isNull(enrollmentTokens.maxUses), lt(enrollmentTokens.uses, enrollmentTokens.maxUses)),
        ),
      )
      .returning(),
  );
  if (used) return used;
  // Revoked, deleted or used up while this enrollment waited for its turn: read again, to say which.
  const current = await firstRow(tx.select().from(enrollmentTokens).where(eq(enrollmentTokens.id, row.id)));
  if (!current) throw unknownToken();
  const stateNow = stateOf(current, now);
  throw refusal(stateNow === "active" ? "used_up" : stateNow);
}

function unknownToken(): UnauthenticatedError {
  return new UnauthenticatedError(
    "enrollment_token_unknown",
    "invalid enrollment token",
    "the enrollment token is unknown",
  );
}

function refusal(state: Exclude<EnrollmentTokenState, "active">): UnauthenticatedError {
  const reasons = {
    expired: "the enrollment token has expired",
    revoked: "the enrollment token has been revoked",
    used_up: "the enrollment token has reached its maximum number of uses",
  };
  return new UnauthenticatedError(`enrollment_token_${state}`, "invalid enrollment token", reasons[state]);
}

/**
 * The id of the enrollment token with this value, whatever its state, or null: enrollment is rate
 * limited per existing token, so guessed values fall back to the per-address budget.
 */
export async function findEnrollmentTokenId(db: DbOrTx, token: string): Promise<string | null> {
  const row = await firstRow(
    db
      .select({ id: enrollmentTokens.id })
      .from(enrollmentTokens)
      .where(eq(enrollmentTokens.tokenHash, hashSecret(token))),
  );
  return row?.id ?? null;
}

/**
 * The id and organization of the enrollment token with this value, whatever its state, or null: what
 * the audit entry of a refused enrollment names (never the value).
 */
export async function findEnrollmentToken(
  db: DbOrTx,
  token: string,
): Promise<{ id: string; organizationId: string } | null> {
  const row = await firstRow(
    db
      .select({ id: enrollmentTokens.id, organizationId: enrollmentTokens.organizationId })
      .from(enrollmentTokens)
      .where(eq(enrollmentTokens.tokenHash, hashSecret(token))),
  );
  return row ?? null;
}

/**
 * The organization (id and name) of a usable enrollment token, or null: read before the enrollment
 * transaction to sign a device certificate with that organization's CA. An unusable token signs nothing.
 */
export async function enrollmentTokenOrganization(
  db: DbOrTx,
  token: string,
  now: Date,
): Promise<{ id: string; name: string } | null> {
  const row = await firstRow(
    db
      .select({ token: enrollmentTokens, name: organizations.name })
      .from(enrollmentTokens)
      .innerJoin(organizations, eq(organizations.id, enrollmentTokens.organizationId))
      .where(eq(enrollmentTokens.tokenHash, hashSecret(token))),
  );
  if (!row || stateOf(row.token, now) !== "active") return null;
  return { id: row.token.organizationId, name: row.name };
}
