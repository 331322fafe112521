import { eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { devices } from "../../db/tables";
import { toIso } from "../../lib/clock";
import { recordEvent } from "../events/record-event";
import type { EffectivePolicy } from "../policies/effective-policy";
import { appendDeviceLog } from "./append-device-log";
import type { DeviceRow } from "./device-views";
import {
  type ComplianceEvaluation,
  evaluateCompliance,
  hasReportedState,
  type Violation,
} from "./evaluate-compliance";
import { isPlatform, type OsMinimums } from "./platform-versions";

/**
 * A device's compliance judged against its policy and the OS minimums (devices.min_os_versions), and
 * the columns that store it.
 */
export function judgeDeviceCompliance(
  now: Date,
  device: DeviceRow,
  policy: EffectivePolicy,
  minimums: OsMinimums,
) {
  const result = evaluateCompliance({
    platform: isPlatform(device.platform) ? device.platform : "linux",
    osVersion: device.osVersion,
    facts: device.facts,
    policy: policy.policyData,
    minimums,
  });
  const columns = {
    complianceStatus: result.status,
    complianceViolations: result.violations,
    complianceMissing: result.missing,
    complianceCheckedAt: hasReportedState(device) ? toIso(now) : device.complianceCheckedAt,
    complianceStale: false,
  };
  return { result, columns };
}

/**
 * When the status or the violations changed (a device that stays non_compliant for another reason is
 * news too), emits device.compliance_changed and logs it on the device. `device` carries the status and
 * violations before the evaluation.
 */
export async function recordComplianceChange(
  tx: DbOrTx,
  now: Date,
  device: DeviceRow,
  policy: EffectivePolicy,
  result: ComplianceEvaluation,
): Promise<void> {
  if (
    result.status === device.complianceStatus &&
    JSON.stringify(result.violations) === JSON.stringify(device.complianceViolations)
  )
    return;
  const change = {
    previous_status: device.complianceStatus,
    status: result.status,
    previous_violations: device.complianceViolations as Violation[],
    policy_id: policy.id,
    policy_version: policy.version,
    violations: result.violations,
    missing: result.missing,
  };
  await recordEvent(tx, now, device.organizationId, "device.compliance_changed", {
    device_id: device.id,
    device_name: device.deviceName,
    platform: device.platform,
    ...change,
  });
  await appendDeviceLog(tx, now, device.id, "device.compliance_changed", change);
}

/**
 * Re-evaluates one device's compliance against its effective policy and stores the result, clearing its
 * stale flag; when the status or the violations changed it emits device.compliance_changed and logs it
 * on the device. `device`
 * carries the facts to judge and the status before this evaluation. last_check moves only when the
 * device has reported something to judge.
 */
export async function reevaluateDeviceCompliance(
  tx: DbOrTx,
  now: Date,
  device: DeviceRow,
  policy: EffectivePolicy,
  minimums: OsMinimums,
): Promise<ComplianceEvaluation> {
  const { result, columns } = judgeDeviceCompliance(now, device, policy, minimums);
  await tx.update(devices).set(columns).where(eq(devices.id, device.id));
  await recordComplianceChange(tx, now, device, policy, result);
  return result;
}
