import { type Static, Type } from "@sinclair/typebox";
import { and, count, desc, eq, gte, lte, type SQL, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { deviceLogs } from "../../db/tables";
import { Timestamp } from "../../lib/schema-types";
import type { DomainDeps } from "../deps";
import { parseInstantRange } from "../instant-filter";
import { findDevice } from "./device-views";

/** The device log filters; `since` and `until` are inclusive instants, normalised by normalizeLogFilter. */
export interface DeviceLogFilter {
  event?: string;
  since?: string;
  until?: string;
}

/** One entry of a device's activity log. */
export const DeviceLogSchema = Type.Object(
  {
    timestamp: Timestamp,
    event: Type.String({
      description:
        "device.enrolled, device.checkin, policy.applied, policy.assigned, device.suspended, " +
        "device.unsuspended, device.offline, device.compliance_changed, wipe.requested, wipe.completed, " +
        "wipe.failed, wipe.timed_out, certificate.renewed or device.updated",
    }),
    details: Type.Record(Type.String(), Type.Unknown()),
  },
  { title: "DeviceLogEntry" },
);

export type DeviceLogEntry = Static<typeof DeviceLogSchema>;

/**
 * One page of a device's activity log, newest first. Entries written in the same instant (a check-in
 * and the policy.applied it caused) come in reverse order of writing: rowid breaks the tie, and it ends
 * both log indexes, so a page is read straight from an index.
 */
export function selectDeviceLogPage(
  db: DbOrTx,
  deviceId: string,
  filter: DeviceLogFilter,
  page: { page: number; pageSize: number },
) {
  return db
    .select()
    .from(deviceLogs)
    .where(logConditions(deviceId, filter))
    .orderBy(desc(deviceLogs.createdAt), desc(sql`${deviceLogs}.rowid`))
    .limit(page.pageSize)
    .offset((page.page - 1) * page.pageSize);
}

/** The filter with `since` and `until` read as instants (parseInstantRange). */
export function normalizeLogFilter(filter: DeviceLogFilter): DeviceLogFilter {
  return { event: filter.event, ...parseInstantRange(filter) };
}

/** A device's activity log, newest first, filtered (see normalizeLogFilter) and paginated. */
export async function listDeviceLogs(
  deps: DomainDeps,
  organizationId: string,
  deviceId: string,
  rawFilter: DeviceLogFilter,
  page: { page: number; pageSize: number },
): Promise<{ data: DeviceLogEntry[]; total: number }> {
  const filter = normalizeLogFilter(rawFilter);
  const device = await findDevice(deps.db, organizationId, deviceId);
  const rows = await selectDeviceLogPage(deps.db, device.id, filter, page);
  const total =
    (
      await firstRow(
        deps.db.select({ value: count() }).from(deviceLogs).where(logConditions(device.id, filter)),
      )
    )?.value ?? 0;
  return {
    data: rows.map((row) => ({ timestamp: row.createdAt, event: row.event, details: row.details })),
    total,
  };
}

function logConditions(deviceId: string, filter: DeviceLogFilter): SQL | undefined {
  const conditions: SQL[] = [eq(deviceLogs.deviceId, deviceId)];
  if (filter.event) conditions.push(eq(deviceLogs.event, filter.event));
  if (filter.since) conditions.push(gte(deviceLogs.createdAt, filter.since));
  if (filter.until) conditions.push(lte(deviceLogs.createdAt, filter.until));
  return and(...conditions);
}
