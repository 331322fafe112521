/**
 * Leaving the server, the last step of an unenroll: `unenroll` takes it at once, and the service takes
 * it for an unenroll whose server was away (the state `unenroll_pending`), trying again with backoff.
 */
import { lstatSync, readdirSync, rmSync, unlinkSync } from "node:fs";
import { join } from "node:path";
import { answerOf, ServerRefusal, ServerUnreachable } from "../agent-api";
import type { CommandRunner } from "../enforce/apply";
import type { AgentState } from "../identity/agent-state";
import { deviceApi } from "../identity/device-certificate";
import type { StatePaths } from "../identity/state-folder";
import { removeInstalledService } from "../install-service";
import { readRuntimeStatus, writeRuntimeStatus } from "./runtime-status";

/**
 * Tells the server the device leaves (`DELETE /api/v1/agent/device`): null when it is done (204, or 401:
 * the server no longer knows this device, so there is nothing left to leave), else why not.
 */
export async function leaveServer(
  paths: StatePaths,
  state: AgentState,
): Promise<ServerRefusal | ServerUnreachable | null> {
  try {
    const api = deviceApi(paths, state, { now: new Date() });
    const result = await api.DELETE("/api/v1/agent/device", {});
    if (result.response.status !== 204) answerOf(result);
    return null;
  } catch (error) {
    if (error instanceof ServerRefusal && error.status === 401) return null;
    if (error instanceof ServerRefusal || error instanceof ServerUnreachable) return error;
    throw error;
  }
}

/** A refusal that may pass (the server overloaded or restarting, a proxy's 502): worth trying again. */
export function isPassing(refusal: ServerRefusal): boolean {
  return refusal.status === 429 || refusal.status >= 500;
}

/** Keeps why the server could not be told, for `status`, and counts the failure for the backoff. */
export function recordUnenrollFailure(paths: StatePaths, error: Error, now: Date): number {
  const status = readRuntimeStatus(paths.status);
  status.failures += 1;
  status.last_error = {
    message: error.message,
    request_id: error instanceof ServerRefusal ? (error.requestId ?? null) : null,
    at: now.toISOString(),
  };
  status.enforcement = [];
  status.policy = null;
  status.applied_policy_version = null;
  status.compliance = null;
  status.next_checkin_at = null;
  writeRuntimeStatus(paths.status, status);
  return status.failures;
}

/**
 * The end of an unenroll, once the server knows: the service (the last thing that keeps the device
 * managed), then every file of the state folder. From the service itself (`fromService`), systemd is
 * asked to stop it without waiting (it is this very process).
 */
export async function finishUnenroll(options: {
  root: string;
  stateDir: string;
  runner: CommandRunner;
  fromService?: boolean;
}): Promise<string[]> {
  const lines = await removeInstalledService(options);
  for (const name of readdirSync(options.stateDir)) {
    const path = join(options.stateDir, name);
    // A file is unlinked itself: Bun's recursive rm of a file fails under Wine (EFAULT).
    if (lstatSync(path).isDirectory()) rmSync(path, { recursive: true, force: true });
    else unlinkSync(path);
  }
  return lines;
}
