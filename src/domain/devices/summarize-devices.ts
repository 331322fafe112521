import { type Static, Type } from "@sinclair/typebox";
import { count, eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { devices } from "../../db/schema";
import { COMPLIANCE_STATUSES, DEVICE_STATUSES } from "../../db/schema/enums";
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
      "Devices by their last compliance evaluation; add up to total",
    ),
  },
  { title: "DeviceSummary" },
);

export type DeviceSummary = Static<typeof DeviceSummarySchema>;

/** Devices of the organization by status: a range of devices_organization_status_idx, read from it alone. */
export function selectStatusCounts(db: DbOrTx, organizationId: string) {
  return db
    .select({ status: devices.status, count: count() })
    .from(devices)
    .where(eq(devices.organizationId, organizationId))
    .groupBy(devices.status);
}

/** Devices of the organization by compliance: a range of devices_organization_compliance_idx, read from it alone. */
export function selectComplianceCounts(db: DbOrTx, organizationId: string) {
  return db
    .select({ compliance: devices.complianceStatus, count: count() })
    .from(devices)
    .where(eq(devices.organizationId, organizationId))
    .groupBy(devices.complianceStatus);
}

/**
 * How many of the organization's devices are in each status and each compliance status, every key
 * present. Both counts are read in one transaction, so they add up to the same total.
 */
export function summarizeDevices(deps: DomainDeps, organizationId: string): DeviceSummary {
  const { statuses, compliance } = deps.db.transaction((tx) => ({
    statuses: selectStatusCounts(tx, organizationId).all(),
    compliance: selectComplianceCounts(tx, organizationId).all(),
  }));
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
