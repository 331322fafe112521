import { eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { devices } from "../../db/tables";
import { toIso } from "../../lib/clock";

/** A user is gone: the devices assigned to them stay enrolled and managed, with no user. Returns how many. */
export async function unassignUserDevices(tx: DbOrTx, now: Date, userId: string): Promise<number> {
  return (
    await tx
      .update(devices)
      .set({ userId: null, updatedAt: toIso(now) })
      .where(eq(devices.userId, userId))
      .returning({ id: devices.id })
  ).length;
}
