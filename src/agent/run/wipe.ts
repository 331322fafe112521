import { existsSync, lstatSync, readdirSync, rmdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { answerOf, ServerRefusal, ServerUnreachable } from "../agent-api";
import { type CommandRunner, runCommand as runSystemCommand, undoAll } from "../enforce/apply";
import { MANAGED_FILES } from "../enforce/settings";
import { OTHER_TUNNEL_INTERFACE, tunnelOwnership } from "../enforce/tunnel-interface";
import { type AgentState, writeAgentState } from "../identity/agent-state";
import { deviceApi } from "../identity/device-certificate";
import { readIfPresent, removeFiles, type StatePaths, writeFileAtomic } from "../identity/state-folder";
import { readRuntimeStatus } from "./runtime-status";

/** A wipe under way (wipe.json in the state folder): a crash resumes it at the next start. */
export interface WipeJournal {
  wipe_id: string;
  reason: string;
  started_at: string;
}

export function wipeJournalPath(paths: StatePaths): string {
  return join(paths.dir, "wipe.json");
}

export function readWipeJournal(paths: StatePaths): WipeJournal | null {
  const text = readIfPresent(wipeJournalPath(paths));
  return text === null ? null : (JSON.parse(text) as WipeJournal);
}

/**
 * Empties a work folder without crossing into other mounts: entries on another file system (a mounted
 * share, a USB disk) are left alone, as are the folder itself and links (removed, never followed).
 * Returns what could not be removed.
 */
export function emptyFolder(folder: string): string[] {
  if (!existsSync(folder)) return [];
  const device = statSync(folder).dev;
  const failures: string[] = [];
  const visit = (path: string) => {
    for (const name of readdirSync(path)) {
      const entry = join(path, name);
      const stat = lstatSync(entry);
      if (stat.dev !== device) continue;
      try {
        if (stat.isDirectory()) {
          visit(entry);
          // A folder holding another mount's point stays (not empty); others go.
          if (readdirSync(entry).length === 0) rmdirSync(entry);
        } else rmSync(entry, { force: true });
      } catch (error) {
        failures.push(`${entry}: ${(error as Error).message}`);
      }
    }
  };
  visit(folder);
  return failures;
}

/**
 * Takes the tunnel down (`wg-quick down` on its file under ROOT) when its interface is the one this
 * enrollment brought up; another interface of that name is left alone, with a note saying so.
 */
export async function takeTunnelDown(
  root: string,
  paths: StatePaths,
  runner: CommandRunner,
): Promise<{ error?: string; note?: string }> {
  const ownership = tunnelOwnership(readRuntimeStatus(paths.status).tunnel_interface);
  if (ownership === "other") return { note: `${OTHER_TUNNEL_INTERFACE}: left as it is` };
  const conf = join(root, MANAGED_FILES.wireguard);
  if (ownership === "absent" || !existsSync(conf)) return {};
  const down = await runner(["wg-quick", "down", conf]);
  return down.exitCode === 0 ? {} : { error: `wg-quick down ${conf} failed: ${down.stderr.trim()}` };
}

/**
 * Carries out a wipe: its journal first (a crash resumes here), the tunnel down (when the agent brought
 * it up), the work folders
 * emptied without crossing mounts, every enforcement undone from the journal; then the server is told
 * (`complete {success}`, or `{success: false, error}`), and the identity (keys, token, certificate) is
 * deleted last, the state saying `wiped`. A wipe that failed keeps the identity, so that an
 * administrator may ask again. Returns the one-line outcome.
 */
export async function carryOutWipe(options: {
  root: string;
  paths: StatePaths;
  state: AgentState;
  wipe: { wipe_id: string; reason: string };
  now: Date;
  runner?: CommandRunner;
}): Promise<string> {
  const { root, paths, state } = options;
  const journal: WipeJournal = readWipeJournal(paths) ?? {
    wipe_id: options.wipe.wipe_id,
    reason: options.wipe.reason,
    started_at: options.now.toISOString(),
  };
  writeFileAtomic(wipeJournalPath(paths), `${JSON.stringify(journal)}\n`);
  const problems: string[] = [];
  const runner = options.runner ?? runSystemCommand;
  const tunnel = await takeTunnelDown(root, paths, runner);
  if (tunnel.error) problems.push(tunnel.error);
  for (const folder of state.work_dirs) problems.push(...emptyFolder(folder));
  const undone = undoAll(root, paths.dir);
  problems.push(...undone.failed.map((failure) => `${failure.path}: ${failure.error}`));

  const api = deviceApi(paths, state, { now: options.now });
  const success = problems.length === 0;
  try {
    answerOf(
      await api.POST("/api/v1/agent/wipes/{wipe_id}/complete", {
        params: { path: { wipe_id: journal.wipe_id } },
        body: success ? { success: true } : { success: false, error: problems.join("; ").slice(0, 2000) },
      }),
    );
  } catch (error) {
    // Told already (a resumed wipe whose confirmation went through): 409 or 401 count as done.
    const isDone = error instanceof ServerRefusal && (error.status === 409 || error.status === 401);
    if (!isDone) {
      if (error instanceof ServerRefusal || error instanceof ServerUnreachable)
        return `the wipe is done here but the server could not be told (${error.message}); it is retried at the next cycle`;
      throw error;
    }
  }
  removeFiles([wipeJournalPath(paths)]);
  if (!success) return `the wipe failed: ${problems.join("; ")}`;
  removeFiles([paths.wireGuardKey, paths.certificateKey, paths.certificate]);
  writeAgentState(paths, { ...state, state: "wiped", device_token: "", tunnel: null });
  const note = tunnel.note ? `; ${tunnel.note}` : "";
  return `wiped (${journal.reason}): work folders emptied, enforcement undone, identity deleted${note}`;
}
