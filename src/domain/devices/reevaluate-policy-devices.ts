import { and, eq, isNull, ne, or, type SQL } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { devices, organizations } from "../../db/schema";
import { toIso } from "../../lib/clock";
import { recordEvent } from "../events/record-event";
import { type EffectivePolicy, resolveEffectivePolicy } from "../policies/effective-policy";
import { appendDeviceLog } from "./append-device-log";
import type { DeviceRow } from "./device-views";
import { type ComplianceEvaluation, evaluateCompliance } from "./evaluate-compliance";
import { isPlatform } from "./platform-versions";

/**
 * Re-evaluates one device's compliance against its effective policy (resolved unless the caller has it)
 * and stores the result; on a status flip it emits device.compliance_changed and logs it on the device.
 * `device` carries the facts to judge and the status before this evaluation. Returns the evaluation.
 */
export function reevaluateDeviceCompliance(
  tx: DbOrTx,
  now: Date,
  device: DeviceRow,
  policy: EffectivePolicy = resolveEffectivePolicy(tx, device.organizationId, device.policyId),
): ComplianceEvaluation {
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
    const change = {
      previous_status: device.complianceStatus,
      status: result.status,
      policy_id: policy.id,
      policy_version: policy.version,
      violations: result.violations,
    };
    recordEvent(tx, now, device.organizationId, "device.compliance_changed", {
      device_id: device.id,
      device_name: device.deviceName,
      platform: device.platform,
      ...change,
    });
    appendDeviceLog(tx, now, device.id, "device.compliance_changed", change);
  }
  return result;
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
  if (affected.length === 0) return 0;
  // Every affected device follows this one policy, so it is resolved once for all of them.
  const policy = resolveEffectivePolicy(tx, organizationId, policyId);
  for (const device of affected) reevaluateDeviceCompliance(tx, now, device, policy);
  return affected.length;
}
