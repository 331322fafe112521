import { eq } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { devices } from "../../db/tables";
import { toIso } from "../../lib/clock";
import { recordAudit } from "../audit/record-audit";
import type { Actor, DomainDeps } from "../deps";
import { ConflictError } from "../errors";
import { recordEvent } from "../events/record-event";
import { resolveEffectivePolicy } from "../policies/effective-policy";
import { appendDeviceLog } from "./append-device-log";
import { type DeviceRow, deviceEventData, findDevice } from "./device-views";
import { type DevicePolicyView, toDevicePolicyView } from "./get-device-policy";
import { reevaluateDeviceCompliance } from "./reevaluate-device-compliance";

/**
 * Assigns a policy of the organization to a device, or `null` to make it follow the organization
 * default (also when the default changes later). Compliance is re-evaluated against the new policy and
 * policy.assigned emitted; assigning what is already assigned changes nothing. 409 for a wiped device.
 */
export async function assignDevicePolicy(
  deps: DomainDeps,
  actor: Actor,
  organizationId: string,
  deviceId: string,
  policyId: string | null,
): Promise<DevicePolicyView> {
  const now = deps.clock.now();
  const timestamp = toIso(now);
  return await withTransaction(deps.db, async (tx) => {
    const device = await findDevice(tx, organizationId, deviceId);
    if (device.status === "wiped")
      throw new ConflictError("device_wiped", "device has been wiped", "its policy is final");
    const policy = await resolveEffectivePolicy(tx, organizationId, policyId);
    // The stored id is the policy's own spelling, whatever case the request used.
    const assignedPolicyId = policyId === null ? null : policy.id;
    if (device.policyId === assignedPolicyId) return toDevicePolicyView(device, policy);
    await tx
      .update(devices)
      .set({ policyId: assignedPolicyId, updatedAt: timestamp })
      .where(eq(devices.id, device.id));
    const updated: DeviceRow = { ...device, policyId: assignedPolicyId, updatedAt: timestamp };
    const compliance = await reevaluateDeviceCompliance(
      tx,
      now,
      updated,
      policy,
      deps.config.devices.min_os_versions,
    );
    const details = {
      policy_id: policy.id,
      policy_name: policy.name,
      previous_policy_id: device.policyId,
      follows_default: policyId === null,
    };
    await appendDeviceLog(tx, now, device.id, "policy.assigned", details);
    await recordEvent(tx, now, organizationId, "policy.assigned", deviceEventData(device, details));
    await recordAudit(tx, now, actor, {
      action: "device.assign_policy",
      targetType: "device",
      targetId: device.id,
      details: { ...details, compliance_status: compliance.status },
    });
    return toDevicePolicyView(updated, policy);
  });
}
