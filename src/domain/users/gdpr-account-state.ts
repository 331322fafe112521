import { eq, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { users } from "../../db/tables";
import { toIso } from "../../lib/clock";

/** The account can no longer sign in, and its processing is reduced to storage (GDPR restriction). */
export async function markUserRestricted(tx: DbOrTx, now: Date, userId: string): Promise<void> {
  await tx
    .update(users)
    .set({ isRestricted: true, updatedAt: toIso(now) })
    .where(eq(users.id, userId));
}

/** From now on, the activity logs of the user's devices keep events and times only (GDPR objection). */
export async function markDeviceActivityObjection(tx: DbOrTx, now: Date, userId: string): Promise<void> {
  await tx
    .update(users)
    .set({
      deviceActivityObjectedAt: sql`coalesce(${users.deviceActivityObjectedAt}, ${toIso(now)})`,
      updatedAt: toIso(now),
    })
    .where(eq(users.id, userId));
}

/**
 * The user row of an erased person becomes an anonymous stub: the id stays (audit entries, requests and
 * histories name it), nothing else about the person does, and no credential can ever match it.
 */
export async function anonymiseUser(tx: DbOrTx, now: Date, userId: string): Promise<void> {
  const timestamp = toIso(now);
  await tx
    .update(users)
    .set({
      email: `erased-${userId}@erased.invalid`,
      name: "Erased user",
      passwordHash: "!erased",
      lastLoginAt: null,
      mfaEnabled: false,
      isRestricted: false,
      deviceActivityObjectedAt: null,
      tokensValidAfter: timestamp,
      deletedAt: sql`coalesce(${users.deletedAt}, ${timestamp})`,
      erasedAt: timestamp,
      updatedAt: timestamp,
    })
    .where(eq(users.id, userId));
}
