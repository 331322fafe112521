import { lookUpCheckInDevices, lookUpPendingWipesOf } from "../../db/lookups";
import type { DomainDeps } from "../deps";
import { UnauthenticatedError } from "../errors";
import { resolveEffectivePolicy } from "../policies/effective-policy";
import { type DevicePeerSettings, devicePeerSettings } from "../vpn/device-vpn-config";
import type { DevicePrincipal } from "./authenticate-device";
import type { CheckInResult } from "./check-in-device";

/** What the next check-in would bring the device, as `GET /agent/checkin` answers it. */
export interface CheckInPreview {
  device_id: string;
  policy: CheckInResult["policy"];
  commands: CheckInResult["commands"];
  vpn_config: DevicePeerSettings;
}

/**
 * The policy, pending commands and VPN settings a check-in would answer, recording nothing: no last
 * seen, no facts, no compliance, no log. What an agent's dry run plans against; a wiped device gets the
 * check-in's 401.
 */
export async function previewCheckIn(deps: DomainDeps, caller: DevicePrincipal): Promise<CheckInPreview> {
  const [row] = await lookUpCheckInDevices(deps.db, [caller.deviceId]);
  if (!row || row.status === "wiped")
    throw new UnauthenticatedError("device_wiped", "invalid device token", "the device has been wiped");
  const policy = await resolveEffectivePolicy(deps.db, row.organizationId, row.policyId);
  const wipes = await lookUpPendingWipesOf(deps.db, [row.id]);
  return {
    device_id: row.id,
    policy: { id: policy.id, name: policy.name, version: policy.version, policy_data: policy.policyData },
    commands: wipes.map((wipe) => ({
      type: "wipe",
      wipe_id: wipe.id,
      reason: wipe.reason,
      notify_user: wipe.notifyUser,
      initiated_at: wipe.initiatedAt,
    })),
    vpn_config: await devicePeerSettings(deps, row, row, policy.policyData),
  };
}
