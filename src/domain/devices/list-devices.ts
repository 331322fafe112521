import { and, count, desc, eq, ne, type SQL, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { containsText } from "../../db/dialect";
import { firstRow } from "../../db/first-row";
import { selectUnfilteredDevicePage } from "../../db/lookups";
import { deviceCounts, devices } from "../../db/tables";
import type { DomainDeps } from "../deps";
import { type DeviceListItem, type DeviceRow, type DeviceStatus, toDeviceListItem } from "./device-views";
import type { Platform } from "./platform-versions";

/** The device list filters; all optional, combined with AND. */
export interface DeviceListFilter {
  status?: DeviceStatus;
  platform?: Platform;
  userId?: string;
  /** Managed devices (not wiped) of this compliance status, as the summary counts them. */
  compliance?: DeviceRow["complianceStatus"];
  /** Part of the device name, matched case-insensitively (ASCII letters) and literally: `%` is a percent. */
  nameContains?: string;
}

/** Only what a list item shows: the JSON columns (facts, violations) are not read or parsed. */
const listColumns = () => ({
  id: devices.id,
  deviceName: devices.deviceName,
  platform: devices.platform,
  status: devices.status,
  lastSeen: devices.lastSeen,
  enrolledAt: devices.enrolledAt,
  complianceStatus: devices.complianceStatus,
});

/**
 * One page of the organization's devices, newest enrolled first. Each filter but the name has an index on
 * (organization, filter, enrolled_at), so a page is read straight from an index; the name is matched on
 * the organization's rows in that index's order.
 */
export function selectDevicePage(
  db: DbOrTx,
  organizationId: string,
  filter: DeviceListFilter,
  page: { page: number; pageSize: number },
) {
  const conditions = filterConditions(db, filter);
  // Ties in enrolled_at are broken by the last column of the index in use: id in the unfiltered
  // (organization, enrolled_at, id) index, which a name search alone also walks; rowid, which ends
  // every other index, when a filter with its own index is set.
  const hasIndexedFilter = conditions.length > (filter.nameContains === undefined ? 0 : 1);
  const tieBreaker = hasIndexedFilter ? sql`${devices}.rowid` : devices.id;
  return db
    .select(listColumns())
    .from(devices)
    .where(and(eq(devices.organizationId, organizationId), ...conditions))
    .orderBy(desc(devices.enrolledAt), desc(tieBreaker))
    .limit(page.pageSize)
    .offset((page.page - 1) * page.pageSize);
}

/**
 * The organization's devices, filtered and paginated. The unfiltered list reads deep pages from anchors
 * (src/db/device-page-anchors.ts) and its total is the organization's maintained device count, so the common
 * listing never counts rows.
 */
export async function listDevices(
  deps: DomainDeps,
  organizationId: string,
  filter: DeviceListFilter,
  page: { page: number; pageSize: number },
): Promise<{ data: DeviceListItem[]; total: number }> {
  if (filterConditions(deps.db, filter).length === 0) {
    const { rows, total } = await selectUnfilteredDevicePage(deps.db, organizationId, page);
    return { data: rows.map(toDeviceListItem), total };
  }
  const rows = await selectDevicePage(deps.db, organizationId, filter, page);
  return { data: rows.map(toDeviceListItem), total: await countDevices(deps.db, organizationId, filter) };
}

/**
 * How many devices match a filter (the unfiltered total is device-page-anchors.ts's): the counts kept by
 * status, platform and compliance (device_counts) for those filters, and a count of rows only for a user
 * or a name.
 */
async function countDevices(db: DbOrTx, organizationId: string, filter: DeviceListFilter): Promise<number> {
  if (filter.userId === undefined && filter.nameContains === undefined) {
    return (
      (
        await firstRow(
          db
            .select({ value: sql<number>`coalesce(sum(${deviceCounts.count}), 0)`.mapWith(Number) })
            .from(deviceCounts)
            .where(
              and(
                eq(deviceCounts.organizationId, organizationId),
                filter.status ? eq(deviceCounts.status, filter.status) : undefined,
                filter.platform ? eq(deviceCounts.platform, filter.platform) : undefined,
                filter.compliance ? eq(deviceCounts.complianceStatus, filter.compliance) : undefined,
                filter.compliance ? ne(deviceCounts.status, "wiped") : undefined,
              ),
            ),
        )
      )?.value ?? 0
    );
  }
  return (
    (
      await firstRow(
        db
          .select({ value: count() })
          .from(devices)
          .where(and(eq(devices.organizationId, organizationId), ...filterConditions(db, filter))),
      )
    )?.value ?? 0
  );
}

function filterConditions(db: DbOrTx, filter: DeviceListFilter): SQL[] {
  const conditions: SQL[] = [];
  if (filter.status) conditions.push(eq(devices.status, filter.status));
  if (filter.platform) conditions.push(eq(devices.platform, filter.platform));
  if (filter.userId) conditions.push(eq(devices.userId, filter.userId));
  // A wiped device is no longer managed: its last evaluation is history, not the fleet's compliance
  // (summarize-devices.ts counts it the same way, so a dashboard number lists exactly its devices).
  if (filter.compliance)
    conditions.push(eq(devices.complianceStatus, filter.compliance), ne(devices.status, "wiped"));
  if (filter.nameContains !== undefined)
    conditions.push(containsText(db, devices.deviceName, filter.nameContains));
  return conditions;
}
