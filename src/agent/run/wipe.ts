import { existsSync } from "node:fs";
import { join } from "node:path";
import { answerOf, ServerRefusal, ServerUnreachable } from "../agent-api";
import { type CommandRunner, programRunnerOf, runCommand as runSystemCommand } from "../enforce/apply";
import { MANAGED_FILES } from "../enforce/settings";
import { OTHER_TUNNEL_INTERFACE, tunnelOwnership } from "../enforce/tunnel-interface";
import { type AgentState, writeAgentState } from "../identity/agent-state";
import { deviceApi } from "../identity/device-certificate";
import { readIfPresent, removeFiles, type StatePaths, writeFileAtomic } from "../identity/state-folder";
import { takeMacosTunnelDown } from "../macos/enforce";
import { currentPlatform, takeWindowsTunnelDown } from "../platform";
import type { ErasureReport } from "./erase-work-profile";
import { type NotificationReport, notifyUsers } from "./notify-users";
import { EMPTY_STATUS, readRuntimeStatus, writeRuntimeStatus } from "./runtime-status";

/** A wipe under way (wipe.json in the state folder): a crash resumes it at the next start. */
export interface WipeJournal {
  wipe_id: string;
  reason: string;
  notify_user?: boolean;
  /** The policy's work paths when the wipe began: a resumed wipe erases the same ones. */
  work_paths?: string[];
  /** The notice was shown (a resumed wipe does not show it twice): whom it reached. */
  notification?: NotificationReport;
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
 * Takes the tunnel down (`wg-quick down` on its file under ROOT) when its interface is the one this
 * enrollment brought up; another interface of that name is left alone, with a note saying so.
 */
export async function takeTunnelDown(
  root: string,
  paths: StatePaths,
  runner: CommandRunner,
): Promise<{ error?: string; note?: string }> {
  // Windows: the tunnel is WireGuard for Windows' service, uninstalled when this enrollment installed it.
  if (currentPlatform().name === "windows")
    return takeWindowsTunnelDown(paths, readRuntimeStatus(paths.status).tunnel_interface, runner);
  // macOS: the utun wg-quick made, known by its name file.
  if (currentPlatform().name === "macos") return takeMacosTunnelDown(root, paths, runner);
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
  wipe: { wipe_id: string; reason: string; notify_user?: boolean };
  /** The policy's `wipe.work_paths` (`~/Work`, `/srv/work/*`): what the work profile is on this machine. */
  workPaths: readonly string[];
  now: Date;
  runner?: CommandRunner;
}): Promise<string> {
  const { root, paths, state } = options;
  const journal: WipeJournal = readWipeJournal(paths) ?? {
    wipe_id: options.wipe.wipe_id,
    reason: options.wipe.reason,
    notify_user: options.wipe.notify_user ?? false,
    work_paths: [...options.workPaths],
    started_at: options.now.toISOString(),
  };
  writeFileAtomic(wipeJournalPath(paths), `${JSON.stringify(journal)}\n`);
  const problems: string[] = [];
  const runner = options.runner ?? runSystemCommand;
  // The people at the machine are told first, once (a resumed wipe keeps the first count).
  if (journal.notify_user && !journal.notification) {
    journal.notification = await notifyUsers(programRunnerOf(runner), journal.reason);
    writeFileAtomic(wipeJournalPath(paths), `${JSON.stringify(journal)}\n`);
  }
  const tunnel = await takeTunnelDown(root, paths, runner);
  if (tunnel.error) problems.push(tunnel.error);
  const platform = currentPlatform();
  const erased = await platform.erase(root, journal.work_paths ?? options.workPaths, state.work_dirs, runner);
  problems.push(...erased.failures);
  const undone = await platform.undo(root, paths.dir, runner);
  problems.push(...undone.failed.map((failure) => `${failure.path}: ${failure.error}`));

  const api = deviceApi(paths, state, { now: options.now });
  const success = problems.length === 0;
  try {
    answerOf(
      await api.POST("/api/v1/agent/wipes/{wipe_id}/complete", {
        params: { path: { wipe_id: journal.wipe_id } },
        body: {
          ...(success ? { success: true } : { success: false, error: problems.join("; ").slice(0, 2000) }),
          report: {
            paths: erased.paths.slice(0, 1000),
            files: erased.files,
            bytes: erased.bytes,
            notification: journal.notification ?? { requested: false, sessions: 0, methods: [] },
          },
        },
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
  // Nothing is enforced and nothing is scheduled any more: status says only what is true now.
  // The check-in that brought the wipe (and the completion) were the last the server heard.
  writeRuntimeStatus(paths.status, { ...EMPTY_STATUS, last_checkin_at: options.now.toISOString() });
  const told = journal.notification
    ? `; ${journal.notification.sessions} session${journal.notification.sessions === 1 ? "" : "s"} notified${journal.notification.detail ? ` (${journal.notification.detail})` : ""}`
    : "";
  const note = `${told}${tunnel.note ? `; ${tunnel.note}` : ""}`;
  return `wiped (${journal.reason}): ${describeErasure(erased)}, enforcement undone, identity deleted${note}`;
}

/** "3 files (12 KiB) erased in 2 work paths", or that there was nothing to erase. */
export function describeErasure(report: ErasureReport): string {
  const erased = report.paths.filter((path) => path.outcome === "erased");
  if (report.paths.length === 0) return "no work paths to erase (the policy names none)";
  const files = `${report.files} file${report.files === 1 ? "" : "s"} (${report.bytes} bytes)`;
  return `${files} erased in ${erased.length} of ${report.paths.length} work path${report.paths.length === 1 ? "" : "s"}`;
}
