import { eq, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { devices, organizations } from "../../db/tables";
import type { DeviceRow } from "./device-views";

/** What enrolling a device (or adding a phone) decides; every other column of a new device starts empty. */
export type NewDevice = Pick<
  DeviceRow,
  | "id"
  | "organizationId"
  | "userId"
  | "deviceName"
  | "platform"
  | "agentVersion"
  | "osVersion"
  | "hardwareId"
  | "status"
  | "policyId"
  | "vpnAddress"
  | "vpnPublicKey"
  | "complianceStatus"
  | "complianceViolations"
  | "complianceMissing"
  | "complianceCheckedAt"
>;

/**
 * Inserts a new device, seen, enrolled and created at `timestamp`, and counts it in its organization's
 * device_count, in the caller's transaction; returns its row.
 */
export async function insertDevice(tx: DbOrTx, fields: NewDevice, timestamp: string): Promise<DeviceRow> {
  const device: DeviceRow = {
    ...fields,
    suspendedReason: null,
    lastSeen: timestamp,
    enrolledAt: timestamp,
    appliedPolicyId: null,
    appliedPolicyVersion: null,
    policyAppliedAt: null,
    facts: null,
    ignoredFacts: null,
    enforcement: null,
    enforcementReportedAt: null,
    complianceStale: false,
    checkinLoggedAt: null,
    createdAt: timestamp,
    updatedAt: timestamp,
  };
  await tx.insert(devices).values(device);
  await tx
    .update(organizations)
    .set({ deviceCount: sql`${organizations.deviceCount} + 1` })
    .where(eq(organizations.id, fields.organizationId));
  return device;
}
