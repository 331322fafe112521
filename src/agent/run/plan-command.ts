import type { PolicyData } from "../../domain/policies/policy-document";
import { readAgentState } from "../identity/agent-state";
import { readIfPresent, statePaths } from "../identity/state-folder";
import { currentPlatform } from "../platform";
import { NotEnrolledError } from "./cycle";
import { readRuntimeStatus } from "./runtime-status";

/**
 * `bulwark agent plan [--json]`: each setting of the last policy the server sent, with its outcome on
 * this machine and the file changes it implies, without asking the server or changing anything. The
 * tunnel is described as `run` finds it: its interface in the running kernel, whatever ROOT is.
 */
export async function planCommand(options: { root: string; stateDir: string; json: boolean }): Promise<void> {
  const paths = statePaths(options.stateDir);
  const state = readAgentState(paths);
  if (!state)
    throw new NotEnrolledError(`${options.stateDir} holds no enrollment: run bulwark agent enroll first`);
  if (state.state === "wiped")
    throw new NotEnrolledError("this device was wiped: nothing is enforced; enroll it again to manage it");
  if (state.state === "unenroll_pending")
    throw new NotEnrolledError(
      "this device is unenrolled (the server is yet to be told): nothing is enforced, nothing is planned",
    );
  const status = readRuntimeStatus(paths.status);
  if (!status.policy)
    throw new NotEnrolledError(
      "no policy yet: the server sends it at the first check-in (bulwark agent run --once)",
    );
  const platform = currentPlatform();
  const collected = await platform.collectFacts(options.root, { liveTunnel: true });
  const planned = await platform.enforce({
    root: options.root,
    stateDir: options.stateDir,
    policy: status.policy.policy_data as unknown as PolicyData,
    vpn: state.tunnel,
    facts: collected.facts,
    options: { noTunnel: false, wireGuardPrivateKey: readIfPresent(paths.wireGuardKey)?.trim() ?? null },
    dryRun: true,
    broughtUp: status.tunnel_interface,
  });
  if (options.json) {
    console.log(
      JSON.stringify(
        {
          policy: { id: status.policy.id, version: status.policy.version },
          settings: planned.plan.map(({ setting, outcome, detail, changes, registry }) => ({
            setting,
            outcome,
            detail,
            files: changes.map((change) => change.path),
            ...(registry && registry.length > 0
              ? { registry: registry.map((change) => `${change.key}\\${change.name}`) }
              : {}),
          })),
        },
        null,
        2,
      ),
    );
    return;
  }
  console.log(`Policy ${status.policy.id}, version ${status.policy.version}:`);
  console.log(planned.text);
}
