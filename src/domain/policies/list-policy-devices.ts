import { type Static, Type } from "@sinclair/typebox";
import { NullableTimestamp, Uuid } from "../../lib/schema-types";
import type { DomainDeps } from "../deps";
import { DeviceStatusSchema } from "../devices/device-views";
import { countPolicyDevices, selectPolicyDevicePage } from "../devices/policy-followers";
import { findDefaultPolicyId, findPolicy } from "./find-policy";

/** A device that follows a policy, and which version of it the device last applied. */
export const PolicyDeviceSchema = Type.Object(
  {
    id: Uuid,
    device_name: Type.String(),
    status: DeviceStatusSchema,
    policy_version: Type.Union([Type.Integer({ minimum: 1 }), Type.Null()], {
      description: "Version of this policy the device last applied; null before its first sync",
    }),
    last_sync: NullableTimestamp,
  },
  { title: "PolicyDevice" },
);

export type PolicyDeviceEntry = Static<typeof PolicyDeviceSchema>;

/**
 * A page of the devices that follow a policy (for the default policy, also the devices without a
 * policy of their own), newest enrollment first; wiped devices are left out.
 */
export async function listPolicyDevices(
  deps: DomainDeps,
  organizationId: string,
  policyId: string,
  page: { page: number; pageSize: number },
): Promise<{ data: PolicyDeviceEntry[]; total: number }> {
  const policy = await findPolicy(deps.db, organizationId, policyId);
  const defaultPolicyId = await findDefaultPolicyId(deps.db, organizationId);
  const rows = await selectPolicyDevicePage(
    deps.db,
    organizationId,
    policy.id,
    policy.id === defaultPolicyId,
    page,
  );
  const total =
    (await countPolicyDevices(deps.db, organizationId, defaultPolicyId, [policy.id])).get(policy.id) ?? 0;
  return {
    data: rows.map((row) => {
      // A version the device applied while it followed another policy says nothing about this one.
      const hasSynced = row.appliedPolicyId === policy.id;
      return {
        id: row.id,
        device_name: row.deviceName,
        status: row.status,
        policy_version: hasSynced ? row.appliedPolicyVersion : null,
        last_sync: hasSynced ? row.policyAppliedAt : null,
      };
    }),
    total,
  };
}
