import { and, eq, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { replaceEmailInJson, replaceEmailLabel } from "../../db/replace-email";
import { enrollmentTokens } from "../../db/tables";
import { unassignUserDevices } from "./unassign-user-devices";

/**
 * An erased user in the devices area: their devices stay enrolled and managed, unassigned; tokens that
 * would enroll devices for them enroll them unassigned; and their email, as the creator of enrollment
 * tokens and the initiator of wipes (in the wipe and in the device's wipe.requested log entry), becomes
 * `replacement`. Returns the devices unassigned.
 */
export async function eraseUserFromDevices(
  tx: DbOrTx,
  now: Date,
  organizationId: string,
  userId: string,
  email: string | null,
  replacement: string,
): Promise<number> {
  const unassigned = await unassignUserDevices(tx, now, userId);
  await tx
    .update(enrollmentTokens)
    .set({ userId: null })
    .where(and(eq(enrollmentTokens.organizationId, organizationId), eq(enrollmentTokens.userId, userId)));
  if (email) {
    const inOrganization = sql`organization_id = ${organizationId}`;
    // Device logs name the initiator of a wipe: only the logs of devices this person wiped are read.
    const suffix = ` (${email})`;
    const wipedByThem = sql`event = 'wipe.requested' AND device_id IN (
      SELECT device_id FROM wipes WHERE organization_id = ${organizationId}
        AND (initiated_by = ${email}
          OR substr(initiated_by, length(initiated_by) - length(${suffix}) + 1) = ${suffix}))`;
    await replaceEmailInJson(tx, "device_logs", "details", wipedByThem, email, replacement);
    await replaceEmailLabel(tx, "wipes", "initiated_by", inOrganization, email, replacement);
    await replaceEmailLabel(tx, "enrollment_tokens", "created_by", inOrganization, email, replacement);
  }
  return unassigned;
}
