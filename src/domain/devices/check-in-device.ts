import type { Tx } from "../../db/client";
import { lookUpCheckInDevice, lookUpPendingWipes, saveDeviceColumns } from "../../db/lookups";
import { addSeconds, toIso } from "../../lib/clock";
import type { DomainDeps } from "../deps";
import { UnauthenticatedError } from "../errors";
import { resolveEffectivePolicy } from "../policies/effective-policy";
import type { PolicyData } from "../policies/policy-document";
import { type DevicePeerSettings, devicePeerSettings } from "../vpn/device-vpn-config";
import { appendDeviceLog } from "./append-device-log";
import type { DevicePrincipal } from "./authenticate-device";
import type { EnforcementEntry, IgnoredFacts } from "./device-report";
import type { DeviceRow, DeviceStatus } from "./device-views";
import type { ComplianceEvaluation, DeviceFacts } from "./evaluate-compliance";
import { judgeDeviceCompliance, recordComplianceChange } from "./reevaluate-device-compliance";

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
  /** The report's facts this server does not know; with `facts`, null when there were none. */
  ignoredFacts?: IgnoredFacts | null;
  enforcement?: EnforcementEntry[];
}

/** A command the agent must carry out. */
export interface WipeCommand {
  type: "wipe";
  wipe_id: string;
  reason: string;
  notify_user: boolean;
  initiated_at: string;
}

/** The check-in answer (`CheckInResponse` in the OpenAPI document), plus the device's compliance. */
export interface CheckInResult {
  device_id: string;
  status: DeviceStatus;
  policy: { id: string; name: string; version: number; policy_data: PolicyData };
  commands: WipeCommand[];
  compliance: ComplianceEvaluation;
  /** The names of this report's facts the server does not know: kept, not judged. */
  ignored_facts: string[];
  /** The current peer settings, so that a changed endpoint, server key or route reaches the device. */
  vpn_config: DevicePeerSettings;
  next_checkin_seconds: number;
}

/** How long an agent should wait before its next check-in: well inside the offline threshold. */
export function nextCheckInSeconds(offlineAfterSeconds: number): number {
  return Math.max(1, Math.min(MAX_CHECKIN_INTERVAL_SECONDS, Math.floor(offlineAfterSeconds / 3)));
}

const CHECK_IN_COLUMNS = [
  "status",
  "lastSeen",
  "agentVersion",
  "osVersion",
  "facts",
  "ignoredFacts",
  "enforcement",
  "enforcementReportedAt",
  "updatedAt",
  "appliedPolicyId",
  "appliedPolicyVersion",
  "policyAppliedAt",
  "complianceStatus",
  "complianceViolations",
  "complianceMissing",
  "complianceCheckedAt",
  "complianceStale",
  "checkinLoggedAt",
] as const satisfies readonly (keyof DeviceRow)[];
/**
 * The columns a steady check-in changes: none of them is in an index (but last_seen) or a trigger.
 * Setting the others to the values they already hold still rewrites their index entries and fires the
 * count triggers: measured at 1M devices, ~110 µs for the full UPDATE against ~28 µs for these alone.
 * An unchanged enforcement report moves only its time.
 */
const HEARTBEAT_COLUMNS = [
  "lastSeen",
  "updatedAt",
  "complianceCheckedAt",
  "checkinLoggedAt",
  "enforcementReportedAt",
] as const;
const HEARTBEAT = new Set<keyof DeviceRow>(HEARTBEAT_COLUMNS);
/**
 * Records an agent check-in in the caller's transaction (the check-in batcher's): last_seen = now,
 * offline -> online (a suspended device stays suspended), the reported versions and facts stored and
 * compliance re-evaluated, all in one write (which also settles a re-evaluation its policy change left
 * pending). `device.checkin` is logged when the report changed (versions, facts, compliance) or the last
 * entry is older than devices.checkin_log_interval_seconds; `policy.applied` once per policy version the
 * agent reports as applied. Answers with the current policy, the pending wipe commands and the VPN peer
 * settings.
 */
export async function checkInDevice(
  deps: DomainDeps,
  tx: Tx,
  caller: DevicePrincipal,
  input: CheckInInput,
): Promise<CheckInResult> {
  const now = deps.clock.now();
  const timestamp = toIso(now);
  const row = await lookUpCheckInDevice(tx, caller.deviceId);
  // The device may have been wiped between authentication and this transaction.
  if (!row || row.status === "wiped") {
    throw new UnauthenticatedError("device_wiped", "invalid device token", "the device has been wiped");
  }
  const policy = await resolveEffectivePolicy(tx, row.organizationId, row.policyId);
  const isPolicyApplied =
    input.policyVersion === policy.version && (input.policyId ?? policy.id) === policy.id;
  const isNewlyApplied =
    isPolicyApplied && (row.appliedPolicyId !== policy.id || row.appliedPolicyVersion !== policy.version);
  const reported: DeviceRow = {
    ...row,
    status: row.status === "offline" || row.status === "pending" ? "online" : row.status,
    lastSeen: timestamp,
    agentVersion: input.agentVersion ?? row.agentVersion,
    osVersion: input.osVersion ?? row.osVersion,
    facts: input.facts ?? row.facts,
    ignoredFacts: input.facts ? (input.ignoredFacts ?? null) : row.ignoredFacts,
    enforcement: input.enforcement ?? row.enforcement,
    enforcementReportedAt: input.enforcement ? timestamp : row.enforcementReportedAt,
    updatedAt: timestamp,
    ...(isNewlyApplied
      ? { appliedPolicyId: policy.id, appliedPolicyVersion: policy.version, policyAppliedAt: timestamp }
      : {}),
  };
  const compliance = judgeDeviceCompliance(now, reported, policy, deps.config.devices.min_os_versions);
  const isReportChanged =
    reported.agentVersion !== row.agentVersion ||
    reported.osVersion !== row.osVersion ||
    !sameFacts(reported.facts, row.facts) ||
    !sameJson(reported.ignoredFacts, row.ignoredFacts) ||
    !sameJson(reported.enforcement, row.enforcement) ||
    isNewlyApplied ||
    compliance.result.status !== row.complianceStatus;
  const isLogDue =
    isReportChanged ||
    row.checkinLoggedAt === null ||
    addSeconds(new Date(row.checkinLoggedAt), deps.config.devices.checkin_log_interval_seconds) <= now;
  const updated: DeviceRow = {
    ...reported,
    ...compliance.columns,
    checkinLoggedAt: isLogDue ? timestamp : row.checkinLoggedAt,
  };
  if (isHeartbeat(row, updated)) {
    await saveDeviceColumns(tx, row.id, HEARTBEAT_COLUMNS, updated);
  } else {
    await saveDeviceColumns(tx, row.id, CHECK_IN_COLUMNS, updated);
  }
  if (isLogDue) {
    await appendDeviceLog(tx, now, row.id, "device.checkin", {
      agent_version: updated.agentVersion,
      os_version: updated.osVersion,
      policy_version: input.policyVersion ?? null,
      facts: input.facts ?? null,
      ...(input.facts && input.ignoredFacts ? { ignored_facts: input.ignoredFacts } : {}),
      ...(input.enforcement ? { enforcement: input.enforcement } : {}),
    });
  }
  if (isNewlyApplied) {
    await appendDeviceLog(tx, now, row.id, "policy.applied", {
      policy_id: policy.id,
      version: policy.version,
    });
  }
  await recordComplianceChange(tx, now, reported, policy, compliance.result);
  const commands = (await lookUpPendingWipes(tx, row.id)).map(
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
    compliance: compliance.result,
    ignored_facts: input.ignoredFacts ? Object.keys(input.ignoredFacts) : [],
    vpn_config: await devicePeerSettings(deps, row, row, policy.policyData),
    next_checkin_seconds: nextCheckInSeconds(deps.config.devices.offline_after_seconds),
  };
}

/** Whether a check-in changes nothing but the heartbeat columns (its time, the log's and compliance's). */
function isHeartbeat(row: DeviceRow, updated: DeviceRow): boolean {
  return CHECK_IN_COLUMNS.every((column) => {
    if (HEARTBEAT.has(column)) return true;
    if (column === "facts") return sameFacts(row.facts, updated.facts);
    return sameJson(row[column], updated[column]);
  });
}

/** Whether two stored values say the same, as their JSON. */
function sameJson(a: unknown, b: unknown): boolean {
  return a === b || JSON.stringify(a) === JSON.stringify(b);
}

/** Whether two fact reports say the same (key order aside). */
function sameFacts(a: DeviceRow["facts"], b: DeviceRow["facts"]): boolean {
  if (a === b) return true;
  if (!a || !b) return false;
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((key) => a[key] === b[key]);
}
