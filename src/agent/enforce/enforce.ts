/**
 * One enforcement pass, as `bulwark agent run` does it after a check-in: read the machine, plan, then
 * apply (or, for a dry run, only print the plan: nothing under ROOT or in the state folder changes).
 */
import type { PolicyData } from "../../domain/policies/policy-document";
import type { ProgramRunner } from "../facts/fact";
import { readDaemonRules, ruleLines, runsRules } from "../facts/usbguard-daemon";
import {
  applyPlan,
  type CommandRunner,
  programRunnerOf,
  readMachineState,
  runCommand,
  type SettingResult,
} from "./apply";
import { formatPlan } from "./format-plan";
import { type EnforcementFacts, type PlanOptions, planEnforcement, type SettingPlan } from "./plan";
import type { VpnSettings } from "./render-wireguard";
import { pathUnderRoot, readFileState } from "./safe-files";
import { MANAGED_FILES } from "./settings";
import type { InterfaceIdentity } from "./tunnel-interface";

export interface EnforceRequest {
  root: string;
  stateDir: string;
  policy: PolicyData;
  vpn: VpnSettings | null;
  facts: EnforcementFacts;
  options: PlanOptions;
  dryRun: boolean;
  runner?: CommandRunner;
  /** Where the tunnel's interface is looked for: the running kernel's /sys/class/net by default. */
  interfaces?: string;
  /** The tunnel's interface this enrollment brought up (status.json), the only one it takes down. */
  broughtUp: InterfaceIdentity | null;
}

/**
 * The plan, every setting's outcome (for a dry run, the planned one), the plan as text, and the tunnel's
 * interface the agent brought up after it (for a dry run, as before).
 */
export interface EnforceResult {
  plan: SettingPlan[];
  results: SettingResult[];
  text: string;
  broughtUp: InterfaceIdentity | null;
}

export async function enforcePolicy(request: EnforceRequest): Promise<EnforceResult> {
  const { root, stateDir, policy, vpn, facts, options } = request;
  const tunnel = { interfaces: request.interfaces, broughtUp: request.broughtUp };
  const machine = readMachineState(root, stateDir, tunnel);
  const plan = planEnforcement({ policy, vpn, facts, options, machine });
  const text = formatPlan(plan);
  if (request.dryRun)
    return {
      plan,
      text,
      results: plan.map(({ setting, outcome, detail }) => ({ setting, outcome, detail })),
      broughtUp: request.broughtUp,
    };
  const applied = await applyPlan(plan, {
    root,
    stateDir,
    ...tunnel,
    ...(request.runner ? { runner: request.runner } : {}),
  });
  await confirmUsbguardRuns(
    root,
    policy,
    plan,
    applied.results,
    programRunnerOf(request.runner ?? runCommand),
  );
  return { plan, text, ...applied };
}

/** The USB settings whose rules usbguard's daemon must run to be in effect. */
const USBGUARD_SETTINGS = new Set(["usb.allowed", "usb.whitelist", "usb.allowed_classes"]);

/**
 * `usb.allowed = false` is enforced only when usbguard's daemon runs the agent's rules, as the daemon
 * lists them: a written file blocks nothing while usbguard is stopped, or before it reads the file. After
 * the rules changed, a running usbguard is restarted (`systemctl try-restart`), since it reads its rule
 * folder when it starts. Otherwise the USB settings that were to be enforced fail, saying why.
 */
async function confirmUsbguardRuns(
  root: string,
  policy: PolicyData,
  plan: readonly SettingPlan[],
  results: SettingResult[],
  run: ProgramRunner,
): Promise<void> {
  const usb = results.find((result) => result.setting === "usb.allowed");
  if (policy.usb.allowed || policy.usb.audit_only || usb?.outcome !== "enforced") return;
  const text = readFileState(pathUnderRoot(root, MANAGED_FILES.usbguard));
  const ours = text === null ? [] : ruleLines(text.bytes.toString("utf8"));
  let daemon = await readDaemonRules(run);
  const changed = plan.some((entry) => entry.setting === "usb.allowed" && entry.changes.length > 0);
  if (changed && !("problem" in daemon) && !runsRules(daemon.rules, ours)) {
    await run(["systemctl", "try-restart", "usbguard"]);
    daemon = await readDaemonRules(run);
  }
  const problem =
    "problem" in daemon
      ? daemon.problem
      : runsRules(daemon.rules, ours)
        ? null
        : `${MANAGED_FILES.usbguard} is written, but usbguard's daemon has not loaded it (restart it: systemctl restart usbguard; its RuleFolder must be /etc/usbguard/rules.d)`;
  for (const result of results) {
    if (!USBGUARD_SETTINGS.has(result.setting) || result.outcome !== "enforced") continue;
    if (problem === null) {
      if (result.setting === "usb.allowed") result.detail += "; usbguard's daemon runs them";
    } else {
      result.outcome = "failed";
      result.detail = result.setting === "usb.allowed" ? problem : `not in effect: ${problem}`;
    }
  }
}
