import { and, eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { devices } from "../../db/schema";
import { formatIpv4 } from "../../lib/ipv4";
import { NotFoundError } from "../errors";
import type { ComplianceReport, Violation } from "./evaluate-compliance";

/** A stored device. */
export type DeviceRow = typeof devices.$inferSelect;

/** A device's lifecycle status. */
export type DeviceStatus = DeviceRow["status"];

/** One row of the device list (SPEC.md's list item plus the compliance status). */
export interface DeviceListItem {
  id: string;
  device_name: string;
  platform: DeviceRow["platform"];
  status: DeviceStatus;
  last_seen: string;
  enrolled_at: string;
  compliance_status: DeviceRow["complianceStatus"];
}

/** The single-device response: every SPEC.md field, the suspension reason and the compliance report. */
export interface DeviceView {
  id: string;
  organization_id: string;
  user_id: string | null;
  device_name: string;
  platform: DeviceRow["platform"];
  agent_version: string;
  os_version: string | null;
  hardware_id: string;
  status: DeviceStatus;
  suspended_reason: string | null;
  last_seen: string;
  enrolled_at: string;
  policy_id: string;
  vpn_ip: string | null;
  vpn_public_key: string;
  created_at: string;
  updated_at: string;
  compliance: ComplianceReport;
}

/** The device fields every device event carries. */
/** The fields every device event's data starts with (event-payloads.ts). */
export interface DeviceEventData {
  device_id: string;
  device_name: string;
  platform: DeviceRow["platform"];
}

/**
 * Finds a device of the organization; another organization's device is not found. Ids are lowercase
 * UUIDs, so an id written in uppercase finds the same device.
 */
export function findDevice(db: DbOrTx, organizationId: string, id: string): DeviceRow {
  const row = db
    .select()
    .from(devices)
    .where(and(eq(devices.id, id.toLowerCase()), eq(devices.organizationId, organizationId)))
    .get();
  if (!row) throw new NotFoundError("device");
  return row;
}

/** The list item of a device row. */
export function toDeviceListItem(
  row: Pick<
    DeviceRow,
    "id" | "deviceName" | "platform" | "status" | "lastSeen" | "enrolledAt" | "complianceStatus"
  >,
): DeviceListItem {
  return {
    id: row.id,
    device_name: row.deviceName,
    platform: row.platform,
    status: row.status,
    last_seen: row.lastSeen,
    enrolled_at: row.enrolledAt,
    compliance_status: row.complianceStatus,
  };
}

/** The compliance report stored on a device row. */
export function toComplianceReport(row: DeviceRow): ComplianceReport {
  return {
    status: row.complianceStatus,
    last_check: row.complianceCheckedAt,
    violations: row.complianceViolations as Violation[],
    missing: row.complianceMissing,
  };
}

/** The single-device view; `effectivePolicyId` is the explicit policy or the organization default. */
export function toDeviceView(row: DeviceRow, effectivePolicyId: string): DeviceView {
  return {
    id: row.id,
    organization_id: row.organizationId,
    user_id: row.userId,
    device_name: row.deviceName,
    platform: row.platform,
    agent_version: row.agentVersion,
    os_version: row.osVersion,
    hardware_id: row.hardwareId,
    status: row.status,
    suspended_reason: row.suspendedReason,
    last_seen: row.lastSeen,
    enrolled_at: row.enrolledAt,
    policy_id: effectivePolicyId,
    vpn_ip: row.vpnAddress === null ? null : formatIpv4(row.vpnAddress),
    vpn_public_key: row.vpnPublicKey,
    created_at: row.createdAt,
    updated_at: row.updatedAt,
    compliance: toComplianceReport(row),
  };
}

/** device_id, device_name and platform, plus any event-specific fields. */
export function deviceEventData<Extra extends object = Record<never, never>>(
  row: DeviceRow,
  extra: Extra = {} as Extra,
): DeviceEventData & Extra {
  return { device_id: row.id, device_name: row.deviceName, platform: row.platform, ...extra };
}
