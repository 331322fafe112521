import { randomInt } from "node:crypto";
import { and, count, eq, isNull } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { recoveryCodes } from "../../db/tables";
import { toIso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import type { SecretBox } from "../../lib/secret-box";

const CODE_COUNT = 10;
// 32 letters and digits without 0/o, 1/l/i: 10 of them carry 50 bits, and nothing is misread.
const ALPHABET = "abcdefghjkmnpqrstuvwxyz23456789";

/** Replaces a user's recovery codes with 10 new ones and returns them (the only time they are seen). */
export async function issueRecoveryCodes(
  tx: DbOrTx,
  secrets: SecretBox,
  userId: string,
  now: Date,
): Promise<string[]> {
  await tx.delete(recoveryCodes).where(eq(recoveryCodes.userId, userId));
  const codes = Array.from({ length: CODE_COUNT }, () => {
    const characters = Array.from({ length: 10 }, () => ALPHABET[randomInt(ALPHABET.length)]).join("");
    return `${characters.slice(0, 5)}-${characters.slice(5)}`;
  });
  await tx.insert(recoveryCodes).values(
    codes.map((code) => ({
      id: newId(),
      userId,
      codeDigest: secrets.digest(normalizeRecoveryCode(code)),
      createdAt: toIso(now),
    })),
  );
  return codes;
}

/** Uses up one of the user's codes; false when it is not one of them or was used before. */
export async function consumeRecoveryCode(
  tx: DbOrTx,
  secrets: SecretBox,
  userId: string,
  code: string,
  now: Date,
): Promise<boolean> {
  const used = await tx
    .update(recoveryCodes)
    .set({ usedAt: toIso(now) })
    .where(
      and(
        eq(recoveryCodes.userId, userId),
        eq(recoveryCodes.codeDigest, secrets.digest(normalizeRecoveryCode(code))),
        isNull(recoveryCodes.usedAt),
      ),
    )
    .returning({ id: recoveryCodes.id });
  return used.length === 1;
}

export async function remainingRecoveryCodes(db: DbOrTx, userId: string): Promise<number> {
  const row = await firstRow(
    db
      .select({ remaining: count() })
      .from(recoveryCodes)
      .where(and(eq(recoveryCodes.userId, userId), isNull(recoveryCodes.usedAt))),
  );
  return row?.remaining ?? 0;
}

/** Whether `code` could be a recovery code at all (10 letters and digits of the alphabet, any case or spacing). */
export function isRecoveryCodeShaped(code: string): boolean {
  const normalized = normalizeRecoveryCode(code);
  return normalized.length === 10 && [...normalized].every((character) => ALPHABET.includes(character));
}

/** Codes are compared without case, spaces or dashes, as people type them. */
function normalizeRecoveryCode(code: string): string {
  return code.toLowerCase().replace(/[\s-]/g, "");
}
