import type { PolicyData } from "../../domain/policies/policy-document";
import { VERSION } from "../../version";
import { type AgentSchemas, answerOf, ServerRefusal, ServerUnreachable } from "../agent-api";
import { checkAnswer, InvalidAnswer } from "../check-answer";
import { type CommandRunner, runCommand as runSystemCommand } from "../enforce/apply";
import { LIVE_INTERFACES, TUNNEL_INTERFACE, TUNNEL_SETTING } from "../enforce/settings";
import { runProgram } from "../facts/fact";
import { readVpnConnection } from "../facts/vpn-connection";
import { checkInFacts } from "../facts-command";
import { type AgentState, readAgentState, writeAgentState } from "../identity/agent-state";
import {
  deviceApi,
  needsCertificateRenewal,
  readDeviceCertificate,
  renewDeviceCertificate,
} from "../identity/device-certificate";
import { readIfPresent, type StatePaths, statePaths } from "../identity/state-folder";
import { currentPlatform } from "../platform";
import { MachineTree } from "../root-path";
import { finishUnenroll, leaveServer, recordUnenrollFailure } from "./leave-server";
import {
  type EnforcementOutcome,
  type RuntimeStatus,
  readRuntimeStatus,
  writeRuntimeStatus,
} from "./runtime-status";
import { backoffDelay, isIdentityLost, nextCheckInDelay } from "./schedule";
import { carryOutWipe, readWipeJournal } from "./wipe";

/** The device token is replaced when it has less than this left (it lives a year). */
const TOKEN_RENEWAL_MS = 30 * 24 * 3600 * 1000;
/** A refused or failed certificate renewal is tried again this much later. */
const CERTIFICATE_RENEWAL_RETRY_MS = 3600 * 1000;
/** Credentials are renewed at most this often, whatever the clocks say. */
const RENEWAL_MIN_INTERVAL_MS = 24 * 3600 * 1000;
/** A clock further than this from the server's is said in status and in the enforcement report. */
const CLOCK_SKEW_WARNING_MS = 60 * 1000;

/** "3 days ahead of", "2 minutes behind": how this machine's clock stands to the server's. */
export function describeClockSkew(offsetMs: number): string {
  const seconds = Math.abs(offsetMs) / 1000;
  const [value, unit] =
    seconds >= 2 * 86400
      ? [seconds / 86400, "days"]
      : seconds >= 2 * 3600
        ? [seconds / 3600, "hours"]
        : seconds >= 120
          ? [seconds / 60, "minutes"]
          : [seconds, "seconds"];
  return `${Math.round(value)} ${unit} ${offsetMs < 0 ? "ahead of" : "behind"}`;
}

/** The enforcement report's entry for a clock far from the server's, or null when it is close. */
function clockEntry(offsetMs: number | null): EnforcementOutcome | null {
  if (offsetMs === null || Math.abs(offsetMs) <= CLOCK_SKEW_WARNING_MS) return null;
  return {
    setting: "clock",
    outcome: "reported",
    detail: `warning: this machine's clock is ${describeClockSkew(offsetMs)} the server's: certificates and tokens are renewed by the server's clock, but TLS, logs and time-based codes use this one; fix it (timedatectl set-ntp true)`,
  };
}

export interface CycleOptions {
  root: string;
  stateDir: string;
  /** Plan and print, change nothing under ROOT or in the state folder. */
  dryRun: boolean;
  /** Write the tunnel's file but never bring the interface up or down. */
  noTunnel: boolean;
  now?: () => Date;
  random?: () => number;
  runner?: CommandRunner;
  /** Where a dry run's plan goes (standard output by default). */
  print?: (text: string) => void;
}

/** How a cycle ended, and when the next should start. */
export interface CycleResult {
  isCheckedIn: boolean;
  delaySeconds: number;
  /** One line for the log or the exit message. */
  message: string;
  /** How many settings this cycle's enforcement failed (the message names them). */
  failedSettings?: number;
  /** The device left the server and the state is gone: the loop ends here, with exit 0. */
  hasLeft?: boolean;
}

/** What a token the server does not know (device_token_invalid) most likely means, and what to do. */
const UNKNOWN_DEVICE =
  "the server no longer knows this device (retired or deleted?): run bulwark agent unenroll, then enroll again";

/** Not enrolled (no state folder), or enrolled no more: `run` has nothing to do (exit 2 for --once). */
export class NotEnrolledError extends Error {
  /** The CLI's usage code, as for a missing flag. */
  readonly exitCode = 2;
}

/** How long a tunnel just brought up is given for its first handshake before the facts are read. */
const FIRST_HANDSHAKE_WAIT_MS = 5_000;

/** Waits (a little) until the live tunnel has a handshake: its vpn_connected reads true, or time is up. */
async function awaitFirstHandshake(): Promise<void> {
  const live = await MachineTree.open("/");
  const deadline = Date.now() + FIRST_HANDSHAKE_WAIT_MS;
  while (Date.now() < deadline) {
    const reading = await readVpnConnection(live, {
      isLive: true,
      runProgram,
      nowSeconds: Math.floor(Date.now() / 1000),
    });
    // Connected, or nothing to wait for (no interface, or one that is down).
    if (reading.value === true || !(await live.exists(`${LIVE_INTERFACES}/${TUNNEL_INTERFACE}`))) return;
    await Bun.sleep(200);
  }
}

/** The enforcement to report, in the order the planner gives, compared by value with the last report. */
function sameEnforcement(a: readonly EnforcementOutcome[], b: readonly EnforcementOutcome[]): boolean {
  return JSON.stringify(a) === JSON.stringify(b);
}

/** The settings that failed, said after a cycle's line: "; 1 setting failed: tunnel (why)". */
function failedSettingsNote(failed: readonly EnforcementOutcome[]): string {
  if (failed.length === 0) return "";
  const each = failed.map((entry) => `${entry.setting}${entry.detail ? ` (${entry.detail})` : ""}`);
  return `; ${failed.length} setting${failed.length === 1 ? "" : "s"} failed: ${each.join(", ")}`;
}

/**
 * One cycle of `bulwark agent run`: collect the facts, check in (with the applied policy version and the
 * last enforcement), apply the policy the answer carries (or the last one kept, when the server cannot
 * be reached), and report a newly applied version or changed enforcement at once. Returns when to run
 * the next cycle: the server's next_checkin_seconds ±10% after a check-in, the backoff after a failure.
 */
export async function runCycle(options: CycleOptions): Promise<CycleResult> {
  const now = options.now ?? (() => new Date());
  const random = options.random ?? Math.random;
  const paths = statePaths(options.stateDir);
  const state = readAgentState(paths);
  if (!state)
    throw new NotEnrolledError(`${options.stateDir} holds no enrollment: run bulwark agent enroll first`);
  if (state.state === "wiped")
    return {
      isCheckedIn: false,
      delaySeconds: 3600,
      message: "this device was wiped: enroll it again to manage it",
    };
  if (state.state === "unenroll_pending")
    return await leaveAfterUnenroll(options, paths, state, now(), random);
  const status = readRuntimeStatus(paths.status);
  // A wipe a crash interrupted resumes before anything else.
  const interrupted = readWipeJournal(paths);
  if (interrupted && !options.dryRun) {
    const message = await carryOutWipe({
      root: options.root,
      paths,
      state,
      wipe: interrupted,
      workPaths: interrupted.work_paths ?? [],
      now: now(),
      ...(options.runner ? { runner: options.runner } : {}),
    });
    return { isCheckedIn: false, delaySeconds: backoffDelay(1, null, random), message };
  }
  // The tunnel is this kernel's whatever ROOT is, unless the agent leaves it alone (--no-tunnel).
  const factOptions = { liveTunnel: !options.noTunnel };
  const platform = currentPlatform();
  const collected = await platform.collectFacts(options.root, factOptions);
  const machine = checkInFacts(collected);
  // The server's time, as far as it is known: every decision about credentials is taken by it.
  const serverNow = () => new Date(now().getTime() + (status.clock_offset_ms ?? 0));
  const api = deviceApi(paths, state, {
    now: serverNow(),
    certificateRefusedAt: status.certificate_refused?.at ?? null,
    onCertificateRefused: (reason) => {
      status.certificate_refused = { reason, at: now().toISOString() };
    },
  });

  const checkIn = async (report: {
    machine: ReturnType<typeof checkInFacts>;
    policyVersion: number | null;
    enforcement: EnforcementOutcome[];
  }) =>
    checkAnswer(
      "checkIn",
      answerOf(
        await api.POST("/api/v1/agent/checkin", {
          body: {
            agent_version: VERSION,
            ...report.machine,
            ...(report.policyVersion !== null ? { policy_version: report.policyVersion } : {}),
            ...(report.enforcement.length > 0 ? { enforcement: report.enforcement } : {}),
          },
        }),
      ),
    );

  let answer: Awaited<ReturnType<typeof checkIn>> | null = null;
  // What the server brings: the check-in's answer, or for a dry run its preview (nothing recorded).
  let brought: Pick<AgentSchemas["CheckInResult"], "policy" | "commands" | "vpn_config"> | null = null;
  let failure: CycleResult | null = null;
  if (state.state === "enrolled") {
    try {
      if (options.dryRun)
        brought = checkAnswer("checkInPreview", answerOf(await api.GET("/api/v1/agent/checkin", {})));
      else {
        answer = await checkIn({
          machine,
          policyVersion: status.applied_policy_version,
          enforcement: status.enforcement,
        });
        brought = answer;
      }
    } catch (error) {
      failure = recordFailure(error, state, status, now(), random);
    }
    status.clock_offset_ms = api.clockOffsetMs() ?? status.clock_offset_ms;
  }

  // A wipe comes before any enforcement: the device stops being managed.
  const wipe = brought?.commands.find((command) => command.type === "wipe");
  if (brought && wipe) {
    if (!answer) {
      const paths = brought.policy.policy_data.wipe?.work_paths ?? [];
      return {
        isCheckedIn: true,
        delaySeconds: 0,
        message: `dry run: a wipe is pending (${wipe.reason}): a run would erase ${paths.length > 0 ? paths.join(", ") : "no work paths (the policy names none)"}, undo every enforcement and delete this device's identity; nothing was changed or sent`,
      };
    }
    const message = await carryOutWipe({
      root: options.root,
      paths,
      state,
      wipe,
      workPaths: answer.policy.policy_data.wipe?.work_paths ?? [],
      now: now(),
      ...(options.runner ? { runner: options.runner } : {}),
    });
    return {
      isCheckedIn: true,
      delaySeconds: nextCheckInDelay(answer.next_checkin_seconds, random),
      message,
    };
  }
  // The policy to enforce: the answer's, else the last one kept (offline, it stays in force).
  if (brought) {
    status.policy = {
      id: brought.policy.id,
      version: brought.policy.version,
      policy_data: brought.policy.policy_data,
    };
    if (answer)
      status.compliance = { status: answer.compliance.status, violations: answer.compliance.violations };
    state.tunnel = {
      endpoint: brought.vpn_config.endpoint,
      address: brought.vpn_config.address,
      server_public_key: brought.vpn_config.server_public_key,
      allowed_ips: brought.vpn_config.allowed_ips,
      dns: brought.vpn_config.dns,
      persistent_keepalive: brought.vpn_config.persistent_keepalive,
    };
  }
  let enforcement = status.enforcement;
  let failed: EnforcementOutcome[] = [];
  // The facts as they are after enforcement (the storage rule in force, the tunnel up): what is reported.
  let enforcedFacts = collected;
  if (status.policy) {
    const enforced = await platform.enforce({
      root: options.root,
      stateDir: options.stateDir,
      policy: status.policy.policy_data as unknown as PolicyData,
      vpn: state.state === "enrolled" ? state.tunnel : null,
      facts: collected.facts,
      options: {
        noTunnel: options.noTunnel,
        wireGuardPrivateKey: readIfPresent(paths.wireGuardKey)?.trim() ?? null,
      },
      dryRun: options.dryRun,
      broughtUp: status.tunnel_interface,
      ...(options.runner ? { runner: options.runner } : {}),
    });
    if (options.dryRun) (options.print ?? console.log)(enforced.text);
    status.tunnel_interface = enforced.broughtUp;
    enforcement = enforced.results.map(({ setting, outcome, detail }) => ({ setting, outcome, detail }));
    const changedSomething = (plan: (typeof enforced.plan)[number]) =>
      plan.changes.length > 0 || plan.tunnel.length > 0 || (plan.registry ?? []).length > 0;
    if (!options.dryRun && enforced.plan.some(changedSomething)) {
      // A tunnel just brought up has its first handshake within a moment: waited for, so that the
      // report says connected in this cycle rather than the next.
      const tunnelUp = enforced.plan.some((plan) => plan.tunnel.includes("up"));
      const tunnelResult = enforced.results.find((result) => result.setting === TUNNEL_SETTING);
      if (tunnelUp && tunnelResult?.outcome === "enforced" && platform.name === "linux")
        await awaitFirstHandshake();
      enforcedFacts = await platform.collectFacts(options.root, factOptions);
      const policy = status.policy.policy_data as unknown as PolicyData;
      enforcement = enforcement.map((entry) => {
        const again = platform.reportFromFacts(entry.setting, { policy, facts: enforcedFacts.facts });
        return again ? { ...entry, ...again } : entry;
      });
    }
    failed = enforcement.filter((entry) => entry.outcome === "failed");
    const clock = clockEntry(status.clock_offset_ms);
    if (clock) enforcement.push(clock);
  }
  if (options.dryRun) {
    const planned = status.policy ? `policy version ${status.policy.version}` : "no policy";
    return {
      isCheckedIn: brought !== null,
      delaySeconds: 0,
      message: brought
        ? `dry run: planned the server's current ${planned}; nothing was changed, and nothing was sent but a read of the policy`
        : `${failure?.message ?? "not enrolled"}; dry run: planned the ${planned} kept from the last check-in, nothing was changed`,
    };
  }

  // A newly applied version, changed enforcement or facts the enforcement changed are reported now, not
  // a whole interval later.
  const appliedVersion = status.policy?.version ?? null;
  const enforcedMachine = checkInFacts(enforcedFacts);
  if (
    answer &&
    (appliedVersion !== status.applied_policy_version ||
      !sameEnforcement(enforcement, status.enforcement) ||
      JSON.stringify(enforcedMachine) !== JSON.stringify(machine))
  ) {
    try {
      answer = await checkIn({ machine: enforcedMachine, policyVersion: appliedVersion, enforcement });
      status.compliance = { status: answer.compliance.status, violations: answer.compliance.violations };
    } catch (error) {
      failure = recordFailure(error, state, status, now(), random);
    }
  }
  status.applied_policy_version = appliedVersion;
  status.enforcement = enforcement;

  // A device token that expires within 30 days (by the server's clock) is replaced now, once a day at
  // most (the new one is saved before any use).
  if (
    answer &&
    !failure &&
    Date.parse(state.device_token_expires_at) - serverNow().getTime() < TOKEN_RENEWAL_MS &&
    !isRecent(status.token_rotated_at, serverNow())
  ) {
    try {
      const rotated = checkAnswer("rotatedToken", answerOf(await api.POST("/api/v1/agent/token", {})));
      state.device_token = rotated.device_token;
      state.device_token_expires_at = rotated.device_token_expires_at;
      status.token_rotated_at = serverNow().toISOString();
      writeAgentState(paths, state);
    } catch (error) {
      failure = recordFailure(error, state, status, now(), random);
    }
  }

  if (answer && !failure) await renewCertificateWhenDue(api, paths, state, status, serverNow());

  let result: CycleResult;
  if (answer && !failure) {
    const delaySeconds = nextCheckInDelay(answer.next_checkin_seconds, random);
    status.failures = 0;
    status.first_unauthenticated_at = null;
    status.last_error = null;
    status.last_checkin_at = now().toISOString();
    status.credential = api.credential();
    result = {
      isCheckedIn: true,
      delaySeconds,
      message: `checked in; compliance ${answer.compliance.status}`,
    };
  } else {
    result = failure ?? {
      isCheckedIn: false,
      delaySeconds: 3600 * (0.9 + 0.2 * random()),
      message: `this device needs a new enrollment (${state.state}); the last policy stays enforced`,
    };
  }
  if (failed.length > 0)
    result = {
      ...result,
      message: result.message + failedSettingsNote(failed),
      failedSettings: failed.length,
    };
  status.next_checkin_at = new Date(now().getTime() + result.delaySeconds * 1000).toISOString();
  writeRuntimeStatus(paths.status, status);
  writeAgentState(paths, state);
  return result;
}

/**
 * An unenroll whose server was away: the machine is restored and nothing is enforced; each cycle tries
 * to tell the server (backoff between tries), and once it knows, removes the service and the state.
 */
async function leaveAfterUnenroll(
  options: CycleOptions,
  paths: StatePaths,
  state: AgentState,
  now: Date,
  random: () => number,
): Promise<CycleResult> {
  if (options.dryRun)
    return {
      isCheckedIn: false,
      delaySeconds: 0,
      message: "dry run: would tell the server this device left",
    };
  const refusal = await leaveServer(paths, state);
  if (refusal === null) {
    const lines = await finishUnenroll({
      root: options.root,
      stateDir: options.stateDir,
      runner: options.runner ?? runSystemCommand,
      fromService: true,
    });
    return {
      isCheckedIn: true,
      delaySeconds: 0,
      hasLeft: true,
      message: [
        `Unenrolled ${state.device_name} (${state.device_id}): the server was told; the machine was restored at unenroll`,
        ...lines,
      ].join("; "),
    };
  }
  const failures = recordUnenrollFailure(paths, refusal, now);
  const delaySeconds = backoffDelay(
    failures,
    refusal instanceof ServerRefusal ? refusal.retryAfterSeconds : null,
    random,
  );
  const status = readRuntimeStatus(paths.status);
  status.next_checkin_at = new Date(now.getTime() + delaySeconds * 1000).toISOString();
  writeRuntimeStatus(paths.status, status);
  return {
    isCheckedIn: false,
    delaySeconds,
    message: `unenroll pending: the machine is restored and nothing is enforced; the server could not be told (${refusal.message}), tried again in ${Math.round(delaySeconds)} s`,
  };
}

/**
 * Renews the device certificate when it is due (30 days before it expires, or when it cannot be used or
 * the server refused it as revoked or unknown). A refusal is recorded for `status` and tried again an
 * hour later; it fails nothing else: the device token still authenticates.
 */
async function renewCertificateWhenDue(
  api: ReturnType<typeof deviceApi>,
  paths: StatePaths,
  state: AgentState,
  status: RuntimeStatus,
  now: Date,
): Promise<void> {
  const read = readDeviceCertificate(paths, now);
  if (!needsCertificateRenewal(state, read, status.certificate_refused?.reason ?? null, now)) return;
  if (isRecent(status.certificate_renewed_at, now)) return;
  const lastError = status.certificate_renewal_error ? Date.parse(status.certificate_renewal_error.at) : null;
  if (lastError !== null && now.getTime() - lastError < CERTIFICATE_RENEWAL_RETRY_MS) return;
  try {
    const renewed = await renewDeviceCertificate(api, paths, state);
    state.certificate_expires_at = renewed.expiresAt;
    writeAgentState(paths, state);
    status.certificate_renewed_at = now.toISOString();
    status.certificate_refused = null;
    status.certificate_renewal_error = null;
  } catch (error) {
    if (
      !(error instanceof ServerRefusal) &&
      !(error instanceof ServerUnreachable) &&
      !(error instanceof InvalidAnswer)
    )
      throw error;
    status.certificate_renewal_error = { message: error.message, at: now.toISOString() };
  }
}

/** Whether `at` (an ISO time, or null) lies less than a day before `now`, or after it. */
function isRecent(at: string | null, now: Date): boolean {
  if (at === null) return false;
  const elapsed = now.getTime() - Date.parse(at);
  return Number.isNaN(elapsed) ? false : elapsed < RENEWAL_MIN_INTERVAL_MS;
}

/**
 * Records a failed check-in in the status and says when to try again: the backoff (with the server's
 * Retry-After as the least wait); 401s that mean the identity is gone switch the state to
 * needs_enrollment (one 401 alone never does).
 */
function recordFailure(
  error: unknown,
  state: AgentState,
  status: RuntimeStatus,
  now: Date,
  random: () => number,
): CycleResult {
  if (
    !(error instanceof ServerRefusal) &&
    !(error instanceof ServerUnreachable) &&
    !(error instanceof InvalidAnswer)
  )
    throw error;
  status.failures += 1;
  const message =
    error instanceof ServerUnreachable
      ? `the server could not be reached: ${error.message}`
      : error instanceof InvalidAnswer
        ? error.message
        : `the server refused the check-in: ${error.message}${error.requestId ? ` [request ${error.requestId}]` : ""}${
            error.reason === "device_token_invalid" ? `; ${UNKNOWN_DEVICE}` : ""
          }`;
  status.last_error = {
    message,
    request_id: error instanceof ServerRefusal ? (error.requestId ?? null) : null,
    at: now.toISOString(),
  };
  if (error instanceof ServerRefusal && error.status === 401) {
    status.first_unauthenticated_at ??= now.toISOString();
    if (isIdentityLost(error.reason, new Date(status.first_unauthenticated_at), now))
      state.state = "needs_enrollment";
  }
  const retryAfter = error instanceof ServerRefusal ? error.retryAfterSeconds : null;
  return {
    isCheckedIn: false,
    delaySeconds: backoffDelay(status.failures, retryAfter, random),
    message,
  };
}
