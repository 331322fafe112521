/**
 * One enforcement pass, as `bulwark agent run` does it after a check-in: read the machine, plan, then
 * apply (or, for a dry run, only print the plan: nothing under ROOT or in the state folder changes).
 */
import type { PolicyData } from "../../domain/policies/policy-document";
import { applyPlan, type CommandRunner, readMachineState, type SettingResult } from "./apply";
import { formatPlan } from "./format-plan";
import { type EnforcementFacts, type PlanOptions, planEnforcement, type SettingPlan } from "./plan";
import type { VpnSettings } from "./render-wireguard";
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
  return { plan, text, ...applied };
}
