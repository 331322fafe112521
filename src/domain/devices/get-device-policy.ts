import type { DomainDeps } from "../deps";
import { type EffectivePolicy, resolveEffectivePolicy } from "../policies/effective-policy";
import { type DeviceRow, findDevice } from "./device-views";

/** SPEC.md's effective device policy view, plus the version and whether it is the default. */
export interface DevicePolicyView {
  policy_id: string;
  name: string;
  version: number;
  is_default: boolean;
  /** Whether the policy is assigned to the device itself, or followed as the organization default. */
  assignment: "explicit" | "default";
  /** When the device applied this policy (the version in `applied_version`); null if never. */
  applied_at: string | null;
  applied_version: number | null;
  settings: { screenshot_allowed: boolean; clipboard_sharing: boolean; usb_allowed: boolean };
}

/** The view of a device's effective policy. */
export function toDevicePolicyView(device: DeviceRow, policy: EffectivePolicy): DevicePolicyView {
  const hasApplied = device.appliedPolicyId === policy.id;
  return {
    policy_id: policy.id,
    name: policy.name,
    version: policy.version,
    is_default: policy.isDefault,
    assignment: device.policyId === null ? "default" : "explicit",
    applied_at: hasApplied ? device.policyAppliedAt : null,
    applied_version: hasApplied ? device.appliedPolicyVersion : null,
    settings: {
      screenshot_allowed: policy.policyData.dlp.screenshot_allowed,
      clipboard_sharing: policy.policyData.dlp.clipboard_sharing,
      usb_allowed: policy.policyData.usb.allowed,
    },
  };
}

/** The policy a device follows: its own, or the organization default. */
export function getDevicePolicy(
  deps: DomainDeps,
  organizationId: string,
  deviceId: string,
): DevicePolicyView {
  const device = findDevice(deps.db, organizationId, deviceId);
  return toDevicePolicyView(device, resolveEffectivePolicy(deps.db, organizationId, device.policyId));
}
