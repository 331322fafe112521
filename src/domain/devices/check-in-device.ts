import { eq } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { devices } from "../../db/schema";
import { toIso } from "../../lib/clock";
import type { DomainDeps } from "../deps";
import { UnauthenticatedError } from "../errors";
import { resolveEffectivePolicy } from "../policies/effective-policy";
import type { PolicyData } from "../policies/policy-document";
import { type DevicePeerSettings, devicePeerSettings } from "../vpn/device-vpn-config";
import { appendDeviceLog } from "./append-device-log";
import type { DevicePrincipal } from "./authenticate-device";
import type { DeviceRow, DeviceStatus } from "./device-views";
import type { ComplianceEvaluation, DeviceFacts } from "./evaluate-compliance";
import { reevaluateDeviceCompliance } from "./reevaluate-device-compliance";
import { selectPendingWipes } from "./wipe-device";

/** The longest interval an agent is told to wait between check-ins. */
export const MAX_CHECKIN_INTERVAL_SECONDS = 300;

/** What an agent reports at check-in; everything is optional. */
export interface CheckInInput {
  agentVersion?: string;
  osVersion?: string;
  /** The policy the agent has applied, when it knows; makes `policyVersion` unambiguous. */
  policyId?: string;
  policyVersion?: number;
  facts?: DeviceFacts;
}

/** A command the agent must carry out. */
export interface WipeCommand {
  type: "wipe";
  wipe_id: string;
  reason: string;
  notify_user: boolean;
  initiated_at: string;
}

/** CONTRACT.md's check-in answer, plus the device's compliance. */
export interface CheckInResult {
  device_id: string;
  status: DeviceStatus;
  policy: { id: string; name: string; version: number; policy_data: PolicyData };
  commands: WipeCommand[];
  compliance: ComplianceEvaluation;
  /** The current peer settings, so that a changed endpoint, server key or route reaches the device. */
  vpn_config: DevicePeerSettings;
  next_checkin_seconds: number;
}

/** How long an agent should wait before its next check-in: well inside the offline threshold. */
export function nextCheckInSeconds(offlineAfterSeconds: number): number {
  return Math.max(1, Math.min(MAX_CHECKIN_INTERVAL_SECONDS, Math.floor(offlineAfterSeconds / 3)));
}

/**
 * Records an agent check-in: last_seen = now, offline -> online (a suspended device stays suspended),
 * the reported versions and facts stored, `device.checkin` logged, compliance re-evaluated (which also
 * settles a re-evaluation its policy change left pending), and
 * `policy.applied` logged once per policy version the agent reports as applied. Answers with the
 * current policy, the pending wipe commands and the VPN peer settings.
 */
export function checkInDevice(deps: DomainDeps, caller: DevicePrincipal, input: CheckInInput): CheckInResult {
  const now = deps.clock.now();
  const timestamp = toIso(now);
  return withTransaction(deps.db, (tx) => {
    const row = tx.select().from(devices).where(eq(devices.id, caller.deviceId)).get();
    // The device may have been wiped between authentication and this transaction.
    if (!row || row.status === "wiped") {
      throw new UnauthenticatedError("device_wiped", "invalid device token", "the device has been wiped");
    }
    const policy = resolveEffectivePolicy(tx, row.organizationId, row.policyId);
    const isPolicyApplied =
      input.policyVersion === policy.version && (input.policyId ?? policy.id) === policy.id;
    const isNewlyApplied =
      isPolicyApplied && (row.appliedPolicyId !== policy.id || row.appliedPolicyVersion !== policy.version);
    const updated: DeviceRow = {
      ...row,
      status: row.status === "offline" || row.status === "pending" ? "online" : row.status,
      lastSeen: timestamp,
      agentVersion: input.agentVersion ?? row.agentVersion,
      osVersion: input.osVersion ?? row.osVersion,
      facts: input.facts ?? row.facts,
      updatedAt: timestamp,
      ...(isNewlyApplied
        ? { appliedPolicyId: policy.id, appliedPolicyVersion: policy.version, policyAppliedAt: timestamp }
        : {}),
    };
    tx.update(devices)
      .set({
        status: updated.status,
        lastSeen: updated.lastSeen,
        agentVersion: updated.agentVersion,
        osVersion: updated.osVersion,
        facts: updated.facts,
        updatedAt: updated.updatedAt,
        appliedPolicyId: updated.appliedPolicyId,
        appliedPolicyVersion: updated.appliedPolicyVersion,
        policyAppliedAt: updated.policyAppliedAt,
      })
      .where(eq(devices.id, row.id))
      .run();
    appendDeviceLog(tx, now, row.id, "device.checkin", {
      agent_version: updated.agentVersion,
      os_version: updated.osVersion,
      policy_version: input.policyVersion ?? null,
      facts: input.facts ?? null,
    });
    if (isNewlyApplied) {
      appendDeviceLog(tx, now, row.id, "policy.applied", { policy_id: policy.id, version: policy.version });
    }
    const compliance = reevaluateDeviceCompliance(tx, now, updated, policy);
    const commands = selectPendingWipes(tx, row.id)
      .all()
      .map(
        (wipe): WipeCommand => ({
          type: "wipe",
          wipe_id: wipe.id,
          reason: wipe.reason,
          notify_user: wipe.notifyUser,
          initiated_at: wipe.initiatedAt,
        }),
      );
    return {
      device_id: row.id,
      status: updated.status,
      policy: { id: policy.id, name: policy.name, version: policy.version, policy_data: policy.policyData },
      commands,
      compliance,
      vpn_config: devicePeerSettings(deps, tx, row, policy.policyData),
      next_checkin_seconds: nextCheckInSeconds(deps.config.devices.offline_after_seconds),
    };
  });
}
