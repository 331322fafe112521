import { type Static, Type } from "@sinclair/typebox";
import { and, eq, ne, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { COMPLIANCE_STATUSES, DEVICE_STATUSES } from "../../db/schema/enums";
import { deviceCounts } from "../../db/tables";
import type { DomainDeps } from "../deps";

const Count = Type.Integer({ minimum: 0 });

/** Every value of `values` as a required integer property: the summary names each one, zeros included. */
function countsOf<const Values extends readonly string[]>(values: Values, description: string) {
  return Type.Object(
    Object.fromEntries(values.map((value) => [value, Count])) as { [Key in Values[number]]: typeof Count },
    { description },
  );
}

/** The organization's devices counted by status and by compliance. */
export const DeviceSummarySchema = Type.Object(
  {
    total: Type.Integer({ minimum: 0, description: "Every device of the organization, wiped ones too" }),
    by_status: countsOf(DEVICE_STATUSES, "Devices in each status; the counts add up to total"),
    by_compliance: countsOf(
      COMPLIANCE_STATUSES,
      "Managed devices (every status but wiped) by their last compliance evaluation; add up to total minus by_status.wiped. A wiped device is no longer managed: it counts in by_status.wiped only, whatever it last reported",
    ),
  },
  { title: "DeviceSummary" },
);

export type DeviceSummary = Static<typeof DeviceSummarySchema>;

/** Devices of the organization by status, added up from the counts kept by triggers (device_counts). */
export function selectStatusCounts(db: DbOrTx, organizationId: string) {
  return db
    .select({ status: deviceCounts.status, count: sql<number>`sum(${deviceCounts.count})`.mapWith(Number) })
    .from(deviceCounts)
    .where(eq(deviceCounts.organizationId, organizationId))
    .groupBy(deviceCounts.status);
}

/**
 * Managed devices of the organization (not wiped) by compliance, added up from the counts kept by
 * triggers (device_counts), which keep the status beside the compliance.
 */
export function selectComplianceCounts(db: DbOrTx, organizationId: string) {
  return db
    .select({
      compliance: deviceCounts.complianceStatus,
      count: sql<number>`sum(${deviceCounts.count})`.mapWith(Number),
    })
    .from(deviceCounts)
    .where(and(eq(deviceCounts.organizationId, organizationId), ne(deviceCounts.status, "wiped")))
    .groupBy(deviceCounts.complianceStatus);
}

/**
 * How many of the organization's devices are in each status and each compliance status, every key
 * present. Compliance is counted for managed devices only: a wiped device's last evaluation (often the
 * very reason it was wiped) says nothing about the fleet any more. Retired and deleted devices are gone
 * from both. Both come from the same kept counts; at a million devices this reads a few dozen rows, not
 * the devices.
 */
export async function summarizeDevices(deps: DomainDeps, organizationId: string): Promise<DeviceSummary> {
  const statuses = await selectStatusCounts(deps.db, organizationId);
  const compliance = await selectComplianceCounts(deps.db, organizationId);
  const byStatus = Object.fromEntries(
    DEVICE_STATUSES.map((status) => [status, statuses.find((row) => row.status === status)?.count ?? 0]),
  ) as DeviceSummary["by_status"];
  const byCompliance = Object.fromEntries(
    COMPLIANCE_STATUSES.map((value) => [
      value,
      compliance.find((row) => row.compliance === value)?.count ?? 0,
    ]),
  ) as DeviceSummary["by_compliance"];
  return {
    total: Object.values(byStatus).reduce((sum, value) => sum + value, 0),
    by_status: byStatus,
    by_compliance: byCompliance,
  };
}
