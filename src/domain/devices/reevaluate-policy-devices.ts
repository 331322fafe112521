import { and, eq, isNull, ne, or, type SQL } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { devices, organizations } from "../../db/schema";
import { toIso } from "../../lib/clock";
import { recordEvent } from "../events/record-event";
import { resolveEffectivePolicy } from "../policies/effective-policy";
import { evaluateCompliance, type Violation } from "./evaluate-compliance";
import { isPlatform } from "./platform-versions";

type DeviceRow = typeof devices.$inferSelect;

/**
 * Re-evaluates one device's compliance against its effective policy and stores the result; emits
 * device.compliance_changed when the status flips. Returns the new status.
 */
export function reevaluateDeviceCompliance(
  tx: DbOrTx,
  now: Date,
  device: DeviceRow,
): DeviceRow["complianceStatus"] {
  const policy = resolveEffectivePolicy(tx, device.organizationId, device.policyId);
  const result = evaluateCompliance({
    platform: isPlatform(device.platform) ? device.platform : "linux",
    osVersion: device.osVersion,
    facts: device.facts,
    policy: policy.policyData,
  });
  tx.update(devices)
    .set({
      complianceStatus: result.status,
      complianceViolations: result.violations,
      complianceCheckedAt: toIso(now),
    })
    .where(eq(devices.id, device.id))
    .run();
  if (result.status !== device.complianceStatus) {
    recordEvent(tx, now, device.organizationId, "device.compliance_changed", {
      device_id: device.id,
      device_name: device.deviceName,
      platform: device.platform,
      previous_status: device.complianceStatus,
      status: result.status,
      violations: result.violations as Violation[],
    });
  }
  return result.status;
}

/**
 * After a policy changes (new version, deletion, new default), re-evaluates every device that follows
 * it: devices assigned to it and, when it is the organization default, devices without a policy.
 * Wiped devices are left alone.
 */
export function reevaluatePolicyDevices(
  tx: DbOrTx,
  now: Date,
  organizationId: string,
  policyId: string,
): number {
  const organization = tx
    .select({ defaultPolicyId: organizations.defaultPolicyId })
    .from(organizations)
    .where(eq(organizations.id, organizationId))
    .get();
  const follows: SQL | undefined =
    organization?.defaultPolicyId === policyId
      ? or(eq(devices.policyId, policyId), isNull(devices.policyId))
      : eq(devices.policyId, policyId);
  const affected = tx
    .select()
    .from(devices)
    .where(and(eq(devices.organizationId, organizationId), ne(devices.status, "wiped"), follows))
    .all();
  for (const device of affected) reevaluateDeviceCompliance(tx, now, device);
  return affected.length;
}
