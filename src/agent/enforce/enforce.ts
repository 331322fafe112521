/**
 * One enforcement pass, as `bulwark agent run` does it after a check-in: read the machine, plan, then
 * apply (or, for a dry run, only print the plan: nothing under ROOT or in the state folder changes).
 */
import type { PolicyData } from "../../domain/policies/policy-document";
import { applyPlan, type CommandRunner, readMachineState, type SettingResult } from "./apply";
import { formatPlan } from "./format-plan";
import { type EnforcementFacts, type PlanOptions, planEnforcement, type SettingPlan } from "./plan";
import type { VpnSettings } from "./render-wireguard";

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
}

/** The plan, every setting's outcome (for a dry run, the planned one) and the plan as text. */
export interface EnforceResult {
  plan: SettingPlan[];
  results: SettingResult[];
  text: string;
}

export async function enforcePolicy(request: EnforceRequest): Promise<EnforceResult> {
  const { root, stateDir, policy, vpn, facts, options } = request;
  const machine = readMachineState(root, stateDir, request.interfaces);
  const plan = planEnforcement({ policy, vpn, facts, options, machine });
  const text = formatPlan(plan);
  if (request.dryRun)
    return {
      plan,
      text,
      results: plan.map(({ setting, outcome, detail }) => ({ setting, outcome, detail })),
    };
  const results = await applyPlan(plan, {
    root,
    stateDir,
    ...(request.runner ? { runner: request.runner } : {}),
  });
  return { plan, text, results };
}
