import type { Tx } from "../../db/client";
import {
  insertDeviceLogRows,
  lookUpCheckInDevices,
  lookUpPendingWipesOf,
  saveDevicesColumns,
} from "../../db/lookups";
import { addSeconds, toIso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import type { DomainDeps } from "../deps";
import { DomainError, UnauthenticatedError } from "../errors";
import { type EffectivePolicy, resolveEffectivePolicy } from "../policies/effective-policy";
import type { PolicyData } from "../policies/policy-document";
import { type DevicePeerSettings, devicePeerSettings } from "../vpn/device-vpn-config";
import type { DeviceLogEvent } from "./append-device-log";
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
/** The device row a check-in reads: the device, its organization's subnet, the stored server key. */
type CheckInRow = Awaited<ReturnType<typeof lookUpCheckInDevices>>[number];

/** What a check-in decided from the row it read: what it writes, and what it answers. */
interface CheckInPlan {
  row: CheckInRow;
  input: CheckInInput;
  policy: EffectivePolicy;
  /** The row with the report, before compliance is stored (recordComplianceChange's `device`). */
  reported: DeviceRow;
  /** The row as written. */
  updated: DeviceRow;
  /** The columns written: a steady heartbeat's, or a full report's. */
  columns: readonly (keyof DeviceRow)[];
  logs: { event: DeviceLogEvent; details: Record<string, unknown> }[];
  compliance: ReturnType<typeof judgeDeviceCompliance>;
}

/** Either a check-in's answer or the error it is answered with. */
export type CheckInOutcome = { ok: true; result: CheckInResult } | { ok: false; error: unknown };

/**
 * Records agent check-ins in the caller's transaction (the check-in batcher's): for each, last_seen =
 * now, offline -> online (a suspended device stays suspended), the reported versions and facts stored
 * and compliance re-evaluated, all in one write (which also settles a re-evaluation its policy change
 * left pending). `device.checkin` is logged when the report changed (versions, facts, compliance) or the
 * last entry is older than devices.checkin_log_interval_seconds; `policy.applied` once per policy
 * version the agent reports as applied. Each answer holds the current policy, the pending wipe commands
 * and the VPN peer settings. A few statements whatever the batch's size: the devices' rows and pending wipes read at once, each check-in
 * judged in order (a device twice in a batch: the second sees the first), then every device row written
 * by one statement per set of columns and every log entry by one more. A check-in refused by the domain
 * (a device wiped since it authenticated, a policy gone) gets its error and writes nothing. Any database
 * error is thrown: the caller undoes what was written and records the batch again one check-in at a
 * time (a batch of one each).
 */
export async function checkInDevices(
  deps: DomainDeps,
  tx: Tx,
  batch: readonly { caller: DevicePrincipal; input: CheckInInput }[],
): Promise<CheckInOutcome[]> {
  const now = deps.clock.now();
  const timestamp = toIso(now);
  const deviceIds = [...new Set(batch.map((pending) => pending.caller.deviceId))];
  const rows = new Map((await lookUpCheckInDevices(tx, deviceIds)).map((row) => [row.id, row]));
  const policies = new Map<string, EffectivePolicy | DomainError>();
  const plans: (CheckInPlan | DomainError)[] = [];
  for (const { caller, input } of batch) {
    try {
      const row = checkInRowOf(rows.get(caller.deviceId));
      const key = `${row.organizationId}/${row.policyId ?? ""}`;
      let policy = policies.get(key);
      if (!policy) {
        policy = await resolveEffectivePolicy(tx, row.organizationId, row.policyId).catch(
          (error: unknown) => {
            if (error instanceof DomainError) return error;
            throw error;
          },
        );
        policies.set(key, policy);
      }
      if (policy instanceof DomainError) throw policy;
      const plan = planCheckIn(deps, now, row, input, policy);
      rows.set(row.id, { ...row, ...plan.updated });
      plans.push(plan);
    } catch (error) {
      if (!(error instanceof DomainError)) throw error;
      plans.push(error);
    }
  }
  const written = plans.filter((plan): plan is CheckInPlan => !(plan instanceof DomainError));
  // A device's last plan holds all its batch's changes: its row, with every column any of them wrote.
  const saves = new Map<string, { deviceId: string; columns: Set<keyof DeviceRow>; row: DeviceRow }>();
  for (const plan of written) {
    const save = saves.get(plan.row.id);
    if (save) {
      for (const column of plan.columns) save.columns.add(column);
      save.row = plan.updated;
    } else
      saves.set(plan.row.id, { deviceId: plan.row.id, columns: new Set(plan.columns), row: plan.updated });
  }
  await saveDevicesColumns(
    tx,
    [...saves.values()].map((save) => ({
      deviceId: save.deviceId,
      columns: save.columns.size === HEARTBEAT_COLUMNS.length ? HEARTBEAT_COLUMNS : CHECK_IN_COLUMNS,
      row: save.row,
    })),
  );
  await insertDeviceLogRows(
    tx,
    written.flatMap((plan) =>
      plan.logs.map((log) => ({
        id: newId(),
        deviceId: plan.row.id,
        event: log.event,
        details: JSON.stringify(log.details),
        createdAt: timestamp,
      })),
    ),
  );
  // By organization (a stable sort: a device's own changes keep their order), so that every batch takes
  // the organizations' event locks (insertEventRow on PostgreSQL) in one order, and two batches on two
  // servers never wait for each other in a circle.
  const byOrganization = [...written].sort((a, b) =>
    a.row.organizationId < b.row.organizationId ? -1 : a.row.organizationId > b.row.organizationId ? 1 : 0,
  );
  for (const plan of byOrganization)
    await recordComplianceChange(tx, now, plan.reported, plan.policy, plan.compliance.result);
  const wipes = Map.groupBy(await lookUpPendingWipesOf(tx, [...saves.keys()]), (wipe) => wipe.deviceId);
  const outcomes: CheckInOutcome[] = [];
  for (const plan of plans)
    outcomes.push(
      plan instanceof DomainError
        ? { ok: false, error: plan }
        : { ok: true, result: await answerOf(deps, plan, wipes.get(plan.row.id) ?? []) },
    );
  return outcomes;
}

/** The row a check-in read; a device gone or wiped since it authenticated is refused. */
function checkInRowOf(row: CheckInRow | undefined): CheckInRow {
  if (!row || row.status === "wiped") {
    throw new UnauthenticatedError("device_wiped", "invalid device token", "the device has been wiped");
  }
  return row;
}

/** What a check-in writes and answers, judged from the device's row and its effective policy. */
function planCheckIn(
  deps: DomainDeps,
  now: Date,
  row: CheckInRow,
  input: CheckInInput,
  policy: EffectivePolicy,
): CheckInPlan {
  const timestamp = toIso(now);
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
  const logs: CheckInPlan["logs"] = [];
  if (isLogDue)
    logs.push({
      event: "device.checkin",
      details: {
        agent_version: updated.agentVersion,
        os_version: updated.osVersion,
        policy_version: input.policyVersion ?? null,
        facts: input.facts ?? null,
        ...(input.facts && input.ignoredFacts ? { ignored_facts: input.ignoredFacts } : {}),
        ...(input.enforcement ? { enforcement: input.enforcement } : {}),
      },
    });
  if (isNewlyApplied)
    logs.push({ event: "policy.applied", details: { policy_id: policy.id, version: policy.version } });
  return {
    row,
    input,
    policy,
    reported,
    updated,
    columns: isHeartbeat(row, updated) ? HEARTBEAT_COLUMNS : CHECK_IN_COLUMNS,
    logs,
    compliance,
  };
}

/** The check-in's answer, once its plan is written. */
async function answerOf(
  deps: DomainDeps,
  { row, input, policy, updated, compliance }: CheckInPlan,
  pendingWipes: readonly { id: string; reason: string; notifyUser: boolean; initiatedAt: string }[],
): Promise<CheckInResult> {
  return {
    device_id: row.id,
    status: updated.status,
    policy: { id: policy.id, name: policy.name, version: policy.version, policy_data: policy.policyData },
    commands: pendingWipes.map(
      (wipe): WipeCommand => ({
        type: "wipe",
        wipe_id: wipe.id,
        reason: wipe.reason,
        notify_user: wipe.notifyUser,
        initiated_at: wipe.initiatedAt,
      }),
    ),
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
