import { eq, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { mfaChallenges } from "../../db/tables";
import { addSeconds, toIso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import { generateSecret, hashSecret } from "../../lib/secrets";
import { UnauthenticatedError } from "../errors";

export const MFA_TOKEN_TTL_SECONDS = 300;
export const MFA_TOKEN_MAX_FAILURES = 5;
const MFA_TOKEN_PREFIX = "bwm_";

export type SignInChallenge = typeof mfaChallenges.$inferSelect;

/**
 * Opens the second step of a sign-in: an opaque mfa_token (stored only as a digest) that is not a JWT
 * and not an API key, so no bearer check can ever accept it.
 */
export async function createSignInChallenge(tx: DbOrTx, userId: string, now: Date): Promise<string> {
  const token = generateSecret(32, MFA_TOKEN_PREFIX);
  await tx.insert(mfaChallenges).values({
    id: newId(),
    userId,
    kind: "sign_in",
    tokenDigest: hashSecret(token),
    createdAt: toIso(now),
    expiresAt: toIso(addSeconds(now, MFA_TOKEN_TTL_SECONDS)),
  });
  return token;
}

/** The challenge of a live mfa_token: unused, unexpired and with fewer than 5 wrong codes; else 401. */
export async function findLiveSignInChallenge(
  db: DbOrTx,
  token: string,
  now: Date,
): Promise<SignInChallenge> {
  const { row, refusal } = await lookUpSignInChallenge(db, token, now);
  if (!row || refusal) throw refusal ?? new UnauthenticatedError("mfa_token_invalid");
  return row;
}

/** The challenge row of an mfa_token, if known, and the 401 to answer when it cannot be used. */
export async function lookUpSignInChallenge(
  db: DbOrTx,
  token: string,
  now: Date,
): Promise<{ row: SignInChallenge | undefined; refusal: UnauthenticatedError | null }> {
  const row = await firstRow(
    db
      .select()
      .from(mfaChallenges)
      .where(eq(mfaChallenges.tokenDigest, hashSecret(token))),
  );
  const problem =
    row?.kind !== "sign_in"
      ? "the MFA token is not known"
      : row.usedAt
        ? "the MFA token has been used"
        : row.expiresAt <= toIso(now)
          ? "the MFA token has expired (it lives 5 minutes)"
          : row.failures >= MFA_TOKEN_MAX_FAILURES
            ? "the MFA token has seen 5 wrong codes"
            : null;
  return {
    row: row?.kind === "sign_in" ? row : undefined,
    refusal: problem
      ? new UnauthenticatedError(
          "mfa_token_invalid",
          "invalid or expired MFA token",
          `${problem}: sign in again`,
        )
      : null,
  };
}

/** Ends every half-finished sign-in of a user (password changed, account disabled or deleted). */
export async function cancelPendingSignIns(tx: DbOrTx, userId: string): Promise<void> {
  await tx
    .delete(mfaChallenges)
    .where(sql`${mfaChallenges.userId} = ${userId} and ${mfaChallenges.kind} = 'sign_in'`);
}

/** Counts a wrong code against the token; returns the count so far. */
export async function countWrongCode(tx: DbOrTx, challengeId: string): Promise<number> {
  const row = await firstRow(
    tx
      .update(mfaChallenges)
      .set({ failures: sql`${mfaChallenges.failures} + 1` })
      .where(eq(mfaChallenges.id, challengeId))
      .returning({ failures: mfaChallenges.failures }),
  );
  return row?.failures ?? MFA_TOKEN_MAX_FAILURES;
}

/** Uses the token up; false when another request used it first. */
export async function useSignInChallenge(tx: DbOrTx, challengeId: string, now: Date): Promise<boolean> {
  const used = await tx
    .update(mfaChallenges)
    .set({ usedAt: toIso(now) })
    .where(sql`${mfaChallenges.id} = ${challengeId} and ${mfaChallenges.usedAt} is null`)
    .returning({ id: mfaChallenges.id });
  return used.length === 1;
}
