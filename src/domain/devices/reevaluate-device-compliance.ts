import { eq } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { devices } from "../../db/schema";
import { toIso } from "../../lib/clock";
import { recordEvent } from "../events/record-event";
import type { EffectivePolicy } from "../policies/effective-policy";
import { appendDeviceLog } from "./append-device-log";
import type { DeviceRow } from "./device-views";
import { type ComplianceEvaluation, evaluateCompliance, hasReportedState } from "./evaluate-compliance";
import { isPlatform } from "./platform-versions";

/** A device's compliance judged against its policy, and the columns that store it. */
export function judgeDeviceCompliance(now: Date, device: DeviceRow, policy: EffectivePolicy) {
  const result = evaluateCompliance({
    platform: isPlatform(device.platform) ? device.platform : "linux",
    osVersion: device.osVersion,
    facts: device.facts,
    policy: policy.policyData,
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
 * On a status flip, emits device.compliance_changed and logs it on the device. `device` carries the
 * status before the evaluation.
 */
export function recordComplianceChange(
  tx: DbOrTx,
  now: Date,
  device: DeviceRow,
  policy: EffectivePolicy,
  result: ComplianceEvaluation,
): void {
  if (result.status === device.complianceStatus) return;
  const change = {
    previous_status: device.complianceStatus,
    status: result.status,
    policy_id: policy.id,
    policy_version: policy.version,
    violations: result.violations,
    missing: result.missing,
  };
  recordEvent(tx, now, device.organizationId, "device.compliance_changed", {
    device_id: device.id,
    device_name: device.deviceName,
    platform: device.platform,
    ...change,
  });
  appendDeviceLog(tx, now, device.id, "device.compliance_changed", change);
}

/**
 * Re-evaluates one device's compliance against its effective policy and stores the result, clearing its
 * stale flag; on a status flip it emits device.compliance_changed and logs it on the device. `device`
 * carries the facts to judge and the status before this evaluation. last_check moves only when the
 * device has reported something to judge.
 */
export function reevaluateDeviceCompliance(
  tx: DbOrTx,
  now: Date,
  device: DeviceRow,
  policy: EffectivePolicy,
): ComplianceEvaluation {
  const { result, columns } = judgeDeviceCompliance(now, device, policy);
  tx.update(devices).set(columns).where(eq(devices.id, device.id)).run();
  recordComplianceChange(tx, now, device, policy, result);
  return result;
}
