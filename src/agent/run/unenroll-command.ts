import { readdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { answerOf, ServerRefusal, ServerUnreachable } from "../agent-api";
import { type CommandRunner, runCommand as runSystemCommand, undoAll } from "../enforce/apply";
import { AgentExit } from "../enroll-command";
import { readAgentState } from "../identity/agent-state";
import { deviceApi } from "../identity/device-certificate";
import { statePaths } from "../identity/state-folder";
import { withStateLock } from "../identity/state-lock";
import { readInstalledService, removeInstalledService } from "../install-service";
import { NotEnrolledError } from "./cycle";
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
  const undone = undoAll(options.root, options.stateDir);
  if (undone.failed.length > 0)
    throw new AgentExit(
      `could not restore ${undone.failed.map((failure) => `${failure.path} (${failure.error})`).join(", ")}; run unenroll again`,
      1,
    );
  if (state.state === "enrolled") {
    try {
      const api = deviceApi(paths, state, { now: new Date() });
      const result = await api.DELETE("/api/v1/agent/device", {});
      if (result.response.status !== 204) answerOf(result);
    } catch (error) {
      if (error instanceof ServerUnreachable)
        throw new AgentExit(
          `the machine is restored, but ${error.message}: run unenroll again when the server is reachable (or an administrator retires the device)`,
          4,
        );
      if (error instanceof ServerRefusal && error.status !== 401)
        throw new AgentExit(
          `the server refused: ${error.message}; the machine is restored, the identity kept`,
          3,
        );
      // 401: the server no longer knows this device; there is nothing left to leave.
      if (!(error instanceof ServerRefusal)) throw error;
    }
  }
  // The service goes last: until everything else is done, it keeps the device managed.
  for (const line of await removeInstalledService(service)) console.error(line);
  for (const name of readdirSync(options.stateDir))
    rmSync(join(options.stateDir, name), { recursive: true, force: true });
  console.error(`Unenrolled ${state.device_name} (${state.device_id}): the machine is as before enrollment`);
}
