import { type Static, Type } from "@sinclair/typebox";
import { NullableTimestamp, Uuid } from "../../lib/schema-types";
import type { DomainDeps } from "../deps";
import { type EffectivePolicy, resolveEffectivePolicy } from "../policies/effective-policy";
import { type DeviceRow, findDevice } from "./device-views";

/** The effective device policy view (`DevicePolicy` in the OpenAPI document), plus the version and whether it is the default. */
export const DevicePolicySchema = Type.Object(
  {
    policy_id: Uuid,
    name: Type.String(),
    version: Type.Integer({ description: "The policy's current version" }),
    is_default: Type.Boolean({ description: "The policy is the organization default" }),
    assignment: Type.Union([Type.Literal("explicit"), Type.Literal("default")], {
      description: "explicit: assigned to the device; default: followed as the organization default",
    }),
    applied_at: NullableTimestamp,
    applied_version: Type.Union([Type.Integer(), Type.Null()], {
      description: "The version of this policy the agent last reported as applied",
    }),
    settings: Type.Object({
      screenshot_allowed: Type.Boolean(),
      clipboard_sharing: Type.Boolean(),
      usb_allowed: Type.Boolean(),
    }),
  },
  { title: "DevicePolicy" },
);

export type DevicePolicyView = Static<typeof DevicePolicySchema>;

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
export async function getDevicePolicy(
  deps: DomainDeps,
  organizationId: string,
  deviceId: string,
): Promise<DevicePolicyView> {
  const device = await findDevice(deps.db, organizationId, deviceId);
  return toDevicePolicyView(device, await resolveEffectivePolicy(deps.db, organizationId, device.policyId));
}
