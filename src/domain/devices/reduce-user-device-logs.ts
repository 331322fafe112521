import { sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { selectRows } from "../../db/dialect";

/**
 * The activity-log entries of the devices assigned to a user keep their event and time only (an
 * objection to the processing of their device activity); returns how many entries lost details.
 */
export async function reduceUserDeviceLogs(
  tx: DbOrTx,
  organizationId: string,
  userId: string,
): Promise<number> {
  const reduced = await selectRows<{ id: string }>(
    tx,
    sql`
    UPDATE device_logs SET details = '{}'
    WHERE CAST(details AS TEXT) != '{}' AND device_id IN (
      SELECT id FROM devices WHERE organization_id = ${organizationId} AND user_id = ${userId})
    RETURNING id`,
  );
  return reduced.length;
}
