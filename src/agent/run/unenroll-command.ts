import { ServerRefusal, ServerUnreachable } from "../agent-api";
import { type CommandRunner, runCommand as runSystemCommand } from "../enforce/apply";
import { AgentExit } from "../enroll-command";
import { readAgentState, writeAgentState } from "../identity/agent-state";
import { statePaths } from "../identity/state-folder";
import { withStateLock } from "../identity/state-lock";
import { readInstalledService, removeInstalledService } from "../install-service";
import { currentPlatform } from "../platform";
import { NotEnrolledError } from "./cycle";
import { finishUnenroll, isPassing, leaveServer, recordUnenrollFailure } from "./leave-server";
import { takeTunnelDown } from "./wipe";

/**
 * `bulwark agent unenroll`: the machine ends as it was before enrollment and the device leaves the
 * server. The tunnel goes down first (wg-quick needs its file; only the interface this enrollment brought
 * up: another of its name is left alone, saying so), then every file the agent changed gets
 * its earlier bytes and mode back from the journal, then `DELETE /api/v1/agent/device` (audited, event
 * device.unenrolled), then the service install-service installed (disabled and stopped, its unit and
 * executable removed when unchanged), and the state folder's files go last. A failure keeps the state
 * so that running it again finishes the job (a service that could not be disabled: exit 1): a file that could not be restored (exit 1), a server that refused (3) or could
 * not be reached (4; the machine is restored by then).
 */
export async function unenrollCommand(options: {
  root: string;
  stateDir: string;
  runner?: CommandRunner;
}): Promise<void> {
  // The service's next cycle must not enforce the policy again while the machine is being restored.
  await withStateLock(options.stateDir, () => unenroll(options));
}

async function unenroll(options: { root: string; stateDir: string; runner?: CommandRunner }): Promise<void> {
  const paths = statePaths(options.stateDir);
  const state = readAgentState(paths);
  const runner = options.runner ?? runSystemCommand;
  const service = { root: options.root, stateDir: options.stateDir, runner };
  if (!state) {
    // A service installed before any enrollment still goes.
    if (!readInstalledService(options.stateDir))
      throw new NotEnrolledError(`${options.stateDir} holds no enrollment: nothing to unenroll`);
    for (const line of await removeInstalledService(service)) console.error(line);
    return;
  }
  const tunnel = await takeTunnelDown(options.root, paths, runner);
  if (tunnel.error) throw new AgentExit(tunnel.error, 1);
  if (tunnel.note) console.error(tunnel.note);
  const undone = await currentPlatform().undo(options.root, options.stateDir, runner);
  if (undone.failed.length > 0)
    throw new AgentExit(
      `could not restore ${undone.failed.map((failure) => `${failure.path} (${failure.error})`).join(", ")}; run unenroll again`,
      1,
    );
  if (state.state === "enrolled" || state.state === "unenroll_pending") {
    const refusal = await leaveServer(paths, state);
    if (refusal instanceof ServerUnreachable || (refusal instanceof ServerRefusal && isPassing(refusal))) {
      // Restored, and so it stays: the service's next cycle tells the server instead of enforcing again.
      writeAgentState(paths, { ...state, state: "unenroll_pending" });
      recordUnenrollFailure(paths, refusal, new Date());
      throw new AgentExit(
        `the machine is restored and nothing is enforced any more, but ${refusal.message}: the service tells the server when it can (or run unenroll again; an administrator may retire the device)`,
        4,
      );
    }
    if (refusal !== null)
      throw new AgentExit(
        `the server refused: ${refusal.message}; the machine is restored, the identity kept`,
        3,
      );
  }
  // The service goes last: until everything else is done, it keeps the device managed.
  for (const line of await finishUnenroll(service)) console.error(line);
  console.error(`Unenrolled ${state.device_name} (${state.device_id}): the machine is as before enrollment`);
}
