import { createHash } from "node:crypto";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";
import unit from "../../deploy/bulwark-agent.service" with { type: "text" };
import { type CommandRunner, runCommand as runSystemCommand } from "./enforce/apply";
import { sha256OfFile, syncPath } from "./enforce/safe-files";
import { AgentExit } from "./enroll-command";
import { readAgentState } from "./identity/agent-state";
import { readIfPresent, statePaths, writeFileAtomic } from "./identity/state-folder";
import { launchDaemonPlist, ownByRootWheel, startBootoutAfterExit } from "./macos/service";
import { DAEMON_LABEL, DAEMON_PLIST, PROGRAMS } from "./macos/settings";
import {
  type InstalledWindowsService,
  installWindowsService,
  removeWindowsService,
  TASK_NAME,
  windowsAgentPaths,
} from "./windows/service";

/** The unit and the executable it starts, as paths on the machine (under ROOT). */
export const UNIT_PATH = "/etc/systemd/system/bulwark-agent.service";
export const EXECUTABLE_PATH = "/usr/local/bin/bulwark";
const SERVICE = "bulwark-agent";

/** Exists while systemd is the running init system (sd_booted(3) looks for it). */
const SYSTEMD_RUNNING = "/run/systemd/system";

/** The file of the state folder that records what install-service installed (for unenroll). */
const SERVICE_RECORD = "service.json";

/** A file install-service wrote: its path under ROOT and the SHA-256 of what it wrote. */
interface InstalledFile {
  path: string;
  sha256: string;
}

/**
 * What install-service installed (STATE/service.json), so that unenroll takes away exactly that: the
 * unit, and the executable when it copied one (null when /usr/local/bin/bulwark already was this one).
 */
export interface InstalledService {
  unit: InstalledFile;
  executable: InstalledFile | null;
}

/** What the unit starts: the installed executable, with the state folder when it is not the default. */
function execStart(stateDir: string): string {
  const stateFlag = stateDir === "/var/lib/bulwark-agent" ? "" : ` --state-dir ${resolve(stateDir)}`;
  return `${EXECUTABLE_PATH} agent run${stateFlag}`;
}

/** The shipped unit (deploy/bulwark-agent.service), starting `execStart`. */
export function agentUnit(stateDir: string): string {
  return unit.replace(`ExecStart=${EXECUTABLE_PATH} agent run`, `ExecStart=${execStart(stateDir)}`);
}

function sha256Of(content: string | Uint8Array): string {
  return createHash("sha256").update(content).digest("hex");
}

function servicePath(stateDir: string): string {
  return join(stateDir, SERVICE_RECORD);
}

/** What install-service installed on macOS: the launch daemon's plist, and the executable it copied. */
export interface InstalledMacosService {
  kind: "macos-launch-daemon";
  plist: InstalledFile;
  executable: InstalledFile | null;
}

type AnyInstalledService = InstalledService | InstalledWindowsService | InstalledMacosService;

export function readInstalledService(stateDir: string): AnyInstalledService | null {
  const text = readIfPresent(servicePath(stateDir));
  return text === null ? null : (JSON.parse(text) as AnyInstalledService);
}

function isWindowsRecord(record: AnyInstalledService): record is InstalledWindowsService {
  return (record as InstalledWindowsService).kind === "windows-scheduled-task";
}

function isMacosRecord(record: AnyInstalledService): record is InstalledMacosService {
  return (record as InstalledMacosService).kind === "macos-launch-daemon";
}

/**
 * install-service on Windows: the scheduled task `Bulwark\Agent` (windows/service.ts says why not a
 * service), recorded in STATE/service.json as on Linux.
 */
async function installOnWindows(stateDir: string, runner?: CommandRunner): Promise<void> {
  const previous = readInstalledService(stateDir);
  const { record, lines } = await installWindowsService({
    stateDir,
    ...(runner ? { runner } : {}),
    previous: previous !== null && isWindowsRecord(previous) ? previous : null,
  });
  writeFileAtomic(servicePath(stateDir), `${JSON.stringify(record, null, 2)}\n`);
  for (const line of lines) console.error(line);
}

/** Whether ROOT is this machine, whose systemd install-service and unenroll talk to. */
function isThisMachine(root: string): boolean {
  return resolve(root) === "/";
}

/** Copies `source` to `target` so that a crash leaves the old file or the new one (it may be running). */
function copyFileAtomic(source: string, target: string, mode: number): void {
  const temporary = `${target}.${process.pid}.tmp`;
  try {
    copyFileSync(source, temporary);
    chmodSync(temporary, mode);
    syncPath(temporary);
    renameSync(temporary, target);
  } finally {
    rmSync(temporary, { force: true });
  }
  syncPath(dirname(target));
}

/** The one line for a file the agent may not write: run it as root. */
function permissionProblem(error: unknown, path: string): AgentExit | null {
  const code = (error as NodeJS.ErrnoException).code;
  if (code !== "EACCES" && code !== "EPERM") return null;
  return new AgentExit(`cannot write ${path}: permission denied; run as root (sudo)`, 1);
}

/** Runs systemctl; a failure is its first line of complaint. */
async function systemctl(runner: CommandRunner, ...args: string[]): Promise<string | null> {
  return await serviceTool(runner, "systemctl", "systemctl", args);
}

/** Runs a service manager's tool (`program`, said as `name`); its failure in one line, or null. */
async function serviceTool(
  runner: CommandRunner,
  program: string,
  name: string,
  args: string[],
): Promise<string | null> {
  try {
    const result = await runner([program, ...args]);
    if (result.exitCode === 0) return null;
    const firstLine = `${result.stderr}\n${result.stdout}`.trim().split("\n")[0]?.trim();
    return `${name} ${args.join(" ")} failed: ${firstLine || `exit ${result.exitCode}`}`;
  } catch (error) {
    return `${name} ${args.join(" ")} failed: ${(error as Error).message}`;
  }
}

/**
 * `bulwark agent install-service`: copies this executable to ROOT/usr/local/bin/bulwark (0755, unless it
 * already is that file), writes the unit to ROOT/etc/systemd/system/bulwark-agent.service (0644) starting
 * it, and records both in STATE/service.json for unenroll. On this machine (ROOT /) systemd must be
 * running, which is checked before anything is written (exit 2), then `systemctl daemon-reload`,
 * `enable` and `restart` (a new executable or unit takes effect); when one fails, what this run wrote
 * is taken away again (exit 1). A prepared tree (--root) gets the files only.
 */
export async function installService(options: {
  root: string;
  stateDir: string;
  executable?: string;
  runner?: CommandRunner;
}): Promise<void> {
  if (process.platform === "win32") return await installOnWindows(options.stateDir, options.runner);
  if (process.platform === "darwin") return await installOnMacos(options);
  const isLive = isThisMachine(options.root);
  if (isLive && !existsSync(SYSTEMD_RUNNING))
    throw new AgentExit(
      `systemd is not running here (no ${SYSTEMD_RUNNING}): nothing was installed; start \`bulwark agent run\` with your service manager`,
      2,
    );
  const source = resolve(options.executable ?? process.execPath);
  if (!existsSync(source)) throw new AgentExit(`${source}: no such executable`, 1);
  const executablePath = join(options.root, EXECUTABLE_PATH);
  const unitPath = join(options.root, UNIT_PATH);
  const recordPath = servicePath(options.stateDir);
  const previous = readInstalledService(options.stateDir);
  /** What this run changed, undone newest first when a later step fails. */
  const undo: (() => void)[] = [];
  const takeBack = () => {
    for (const step of undo.reverse()) {
      try {
        step();
      } catch {
        // Going on with the rest: the error that made this run fail is the one to say.
      }
    }
  };
  const said: string[] = [];

  let writing = executablePath;
  try {
    const sourceDigest = sha256OfFile(source);
    const isThere = existsSync(executablePath);
    let executable: InstalledFile | null;
    if (isThere && sha256OfFile(executablePath) === sourceDigest) {
      said.push(`${executablePath} is already this executable`);
      // Still the copy an earlier install-service made: unenroll removes it.
      executable = previous?.executable?.sha256 === sourceDigest ? previous.executable : null;
    } else {
      mkdirSync(dirname(executablePath), { recursive: true, mode: 0o755 });
      copyFileAtomic(source, executablePath, 0o755);
      if (!isThere) undo.push(() => unlinkSync(executablePath));
      said.push(`Installed ${executablePath} (0755), a copy of ${source}`);
      executable = { path: EXECUTABLE_PATH, sha256: sourceDigest };
    }

    writing = unitPath;
    const text = agentUnit(options.stateDir);
    const unitBefore = readIfPresent(unitPath);
    const unitMode = unitBefore === null ? 0o644 : statSync(unitPath).mode & 0o7777;
    mkdirSync(dirname(unitPath), { recursive: true, mode: 0o755 });
    writeFileAtomic(unitPath, text, 0o644);
    undo.push(() =>
      unitBefore === null ? unlinkSync(unitPath) : writeFileAtomic(unitPath, unitBefore, unitMode),
    );
    said.push(`Wrote ${unitPath} (ExecStart=${execStart(options.stateDir)})`);

    writing = recordPath;
    const recordBefore = readIfPresent(recordPath);
    if (!existsSync(options.stateDir)) {
      mkdirSync(options.stateDir, { recursive: true, mode: 0o700 });
      undo.push(() => rmSync(options.stateDir, { recursive: true, force: true }));
    }
    const record: InstalledService = { unit: { path: UNIT_PATH, sha256: sha256Of(text) }, executable };
    writeFileAtomic(recordPath, `${JSON.stringify(record, null, 2)}\n`);
    undo.push(() =>
      recordBefore === null ? unlinkSync(recordPath) : writeFileAtomic(recordPath, recordBefore),
    );
  } catch (error) {
    takeBack();
    throw permissionProblem(error, writing) ?? error;
  }
  if (!readAgentState(statePaths(options.stateDir)))
    said.push(
      `${options.stateDir} holds no enrollment yet: the service stops at once until you run bulwark agent enroll, then systemctl restart ${SERVICE}`,
    );
  if (!isLive) {
    said.push(`ROOT is not /: run systemctl daemon-reload && systemctl enable --now ${SERVICE} there`);
    for (const line of said) console.error(line);
    return;
  }
  const runner = options.runner ?? runSystemCommand;
  for (const args of [["daemon-reload"], ["enable", SERVICE], ["restart", SERVICE]]) {
    const failure = await systemctl(runner, ...args);
    if (failure === null) continue;
    takeBack();
    // systemd forgets the unit it loaded only when told (when it could be reached at all).
    if (args[0] !== "daemon-reload") await systemctl(runner, "daemon-reload");
    throw new AgentExit(`${failure}; what install-service wrote is removed again`, 1);
  }
  const note = source === resolve(executablePath) ? "" : ` (${source} is no longer needed)`;
  said.push(`${SERVICE} is enabled and started: journalctl -u ${SERVICE}${note}`);
  for (const line of said) console.error(line);
}

/**
 * Takes away what install-service installed (STATE/service.json), for unenroll: on this machine
 * `systemctl disable --now bulwark-agent` first (when systemd runs), then the unit and the executable it
 * copied, each only when its content is still what was installed, then `systemctl daemon-reload`.
 * Returns the lines to say; a systemctl that fails to disable throws (run unenroll again).
 */
export async function removeInstalledService(options: {
  root: string;
  stateDir: string;
  runner?: CommandRunner;
  /** Called from the service itself: systemd is asked to stop it without waiting (it is this process). */
  fromService?: boolean;
}): Promise<string[]> {
  const record = readInstalledService(options.stateDir);
  if (record === null) return [];
  const runner = options.runner ?? runSystemCommand;
  if (isWindowsRecord(record)) {
    // Only what install-service installs: a record naming another task or file is not the agent's.
    const expected = windowsAgentPaths();
    const isOurs =
      record.task === TASK_NAME &&
      (record.executable === null ||
        record.executable.path.toLowerCase() === expected.executable.toLowerCase()) &&
      record.definition.path.toLowerCase() ===
        join(resolve(options.stateDir), "agent-task.xml").toLowerCase();
    if (!isOurs)
      throw new AgentExit(
        `${servicePath(options.stateDir)} names a task or files install-service does not install: left as it is`,
        1,
      );
    const lines = await removeWindowsService(record, runner, { fromService: options.fromService ?? false });
    unlinkSync(servicePath(options.stateDir));
    return lines;
  }
  if (isMacosRecord(record)) return await removeMacosService(record, { ...options, runner });
  const withSystemd = isThisMachine(options.root) && existsSync(SYSTEMD_RUNNING);
  if (withSystemd) {
    const failure = await systemctl(
      runner,
      ...(options.fromService ? ["disable", "--now", "--no-block", SERVICE] : ["disable", "--now", SERVICE]),
    );
    if (failure !== null) throw new AgentExit(`${failure}; run bulwark agent unenroll again`, 1);
  }
  const lines: string[] = [];
  for (const installed of [record.unit, record.executable]) {
    if (installed === null) continue;
    const path = join(options.root, installed.path);
    if (!existsSync(path)) continue;
    if (sha256OfFile(path) !== installed.sha256) {
      lines.push(`${path} changed since install-service: left as it is`);
      continue;
    }
    unlinkSync(path);
    lines.push(`Removed ${path}`);
  }
  if (withSystemd) {
    const failure = await systemctl(runner, "daemon-reload");
    if (failure !== null) lines.push(failure);
  }
  unlinkSync(servicePath(options.stateDir));
  return lines;
}

/** Copies this executable to ROOT/usr/local/bin/bulwark unless it already is that file; what it installed. */
function installExecutable(
  source: string,
  root: string,
  previous: InstalledFile | null,
  undo: (() => void)[],
  said: string[],
): InstalledFile | null {
  const executablePath = join(root, EXECUTABLE_PATH);
  const sourceDigest = sha256OfFile(source);
  const isThere = existsSync(executablePath);
  if (isThere && sha256OfFile(executablePath) === sourceDigest) {
    said.push(`${executablePath} is already this executable`);
    return previous?.sha256 === sourceDigest ? previous : null;
  }
  mkdirSync(dirname(executablePath), { recursive: true, mode: 0o755 });
  copyFileAtomic(source, executablePath, 0o755);
  if (!isThere) undo.push(() => unlinkSync(executablePath));
  said.push(`Installed ${executablePath} (0755), a copy of ${source}`);
  return { path: EXECUTABLE_PATH, sha256: sourceDigest };
}

/** Runs launchctl; its failure in one line, or null. */
async function launchctl(runner: CommandRunner, ...args: string[]): Promise<string | null> {
  return await serviceTool(runner, PROGRAMS.launchctl, "launchctl", args);
}

/**
 * install-service on macOS: this executable copied to ROOT/usr/local/bin/bulwark (0755), the launch
 * daemon ROOT/Library/LaunchDaemons/com.bulwark.agent.plist (0644, root:wheel) starting it with `agent
 * run --state-dir STATE` (RunAtLoad; KeepAlive unless it exits 0; AbandonProcessGroup, so that the tunnel
 * wg-quick started outlives a restart of the agent), both recorded in STATE/service.json; on this Mac
 * (ROOT /) the daemon is booted out when loaded, then `launchctl bootstrap system PLIST` (a failure takes
 * back what this run wrote, exit 1). A prepared tree gets the files only.
 */
export async function installOnMacos(options: {
  root: string;
  stateDir: string;
  executable?: string;
  runner?: CommandRunner;
}): Promise<void> {
  const isLive = isThisMachine(options.root);
  const source = resolve(options.executable ?? process.execPath);
  if (!existsSync(source)) throw new AgentExit(`${source}: no such executable`, 1);
  const plistPath = join(options.root, DAEMON_PLIST);
  const recordPath = servicePath(options.stateDir);
  const previous = readInstalledService(options.stateDir);
  const undo: (() => void)[] = [];
  const takeBack = () => {
    for (const step of undo.reverse()) {
      try {
        step();
      } catch {
        // Going on with the rest: the error that made this run fail is the one to say.
      }
    }
  };
  const said: string[] = [];
  let writing = join(options.root, EXECUTABLE_PATH);
  try {
    const executable = installExecutable(
      source,
      options.root,
      previous !== null && isMacosRecord(previous) ? previous.executable : null,
      undo,
      said,
    );
    writing = plistPath;
    const text = launchDaemonPlist(EXECUTABLE_PATH, resolve(options.stateDir));
    const before = readIfPresent(plistPath);
    mkdirSync(dirname(plistPath), { recursive: true, mode: 0o755 });
    writeFileAtomic(plistPath, text, 0o644);
    ownByRootWheel(plistPath);
    undo.push(() => (before === null ? unlinkSync(plistPath) : writeFileAtomic(plistPath, before, 0o644)));
    said.push(`Wrote ${plistPath} (0644; agent run --state-dir ${resolve(options.stateDir)})`);
    writing = recordPath;
    const recordBefore = readIfPresent(recordPath);
    if (!existsSync(options.stateDir)) {
      mkdirSync(options.stateDir, { recursive: true, mode: 0o700 });
      undo.push(() => rmSync(options.stateDir, { recursive: true, force: true }));
    }
    const record: InstalledMacosService = {
      kind: "macos-launch-daemon",
      plist: { path: DAEMON_PLIST, sha256: sha256Of(text) },
      executable,
    };
    writeFileAtomic(recordPath, `${JSON.stringify(record, null, 2)}\n`);
    undo.push(() =>
      recordBefore === null ? unlinkSync(recordPath) : writeFileAtomic(recordPath, recordBefore),
    );
  } catch (error) {
    takeBack();
    throw permissionProblem(error, writing) ?? error;
  }
  if (!readAgentState(statePaths(options.stateDir)))
    said.push(
      `${options.stateDir} holds no enrollment yet: the daemon stops at once until you run bulwark agent enroll (launchd starts it again)`,
    );
  if (!isLive) {
    said.push(`ROOT is not /: run launchctl bootstrap system ${DAEMON_PLIST} there`);
    for (const line of said) console.error(line);
    return;
  }
  const runner = options.runner ?? runSystemCommand;
  // Loaded already (an earlier install-service): booted out first, so that the new plist is the one run.
  await launchctl(runner, "bootout", `system/${DAEMON_LABEL}`);
  const failure = await launchctl(runner, "bootstrap", "system", plistPath);
  if (failure !== null) {
    takeBack();
    throw new AgentExit(`${failure}; what install-service wrote is removed again`, 1);
  }
  said.push(
    `${DAEMON_LABEL} is loaded and started: launchctl print system/${DAEMON_LABEL}; log in /var/log/bulwark-agent.log`,
  );
  for (const line of said) console.error(line);
}

/**
 * Takes the launch daemon away (unenroll): on this Mac `launchctl bootout system/com.bulwark.agent`
 * (from the daemon itself, by a detached shell once the agent has ended: booting it out ends this very
 * process), and the plist and the executable it copied, each only when unchanged since install-service.
 */
async function removeMacosService(
  record: InstalledMacosService,
  options: { root: string; stateDir: string; runner: CommandRunner; fromService?: boolean },
): Promise<string[]> {
  if (
    record.plist.path !== DAEMON_PLIST ||
    (record.executable !== null && record.executable.path !== EXECUTABLE_PATH)
  )
    throw new AgentExit(
      `${servicePath(options.stateDir)} names files install-service does not install: left as it is`,
      1,
    );
  const isLive = isThisMachine(options.root);
  const lines: string[] = [];
  if (isLive && !options.fromService) {
    const failure = await launchctl(options.runner, "bootout", `system/${DAEMON_LABEL}`);
    // Not loaded (booted out already, or never bootstrapped) is what was wanted.
    if (failure !== null && !/No such process|Could not find service|not find/i.test(failure))
      throw new AgentExit(`${failure}; run bulwark agent unenroll again`, 1);
  }
  for (const installed of [record.plist, record.executable]) {
    if (installed === null) continue;
    const path = join(options.root, installed.path);
    if (!existsSync(path)) continue;
    if (sha256OfFile(path) !== installed.sha256) {
      lines.push(`${path} changed since install-service: left as it is`);
      continue;
    }
    unlinkSync(path);
    lines.push(`Removed ${path}`);
  }
  unlinkSync(servicePath(options.stateDir));
  if (isLive && options.fromService) {
    // launchd ends this process when it boots the daemon out: a shell in a session of its own boots it
    // out once this process has ended (startBootoutAfterExit says why so). Until then launchd restarts
    // it only after a nonzero exit (KeepAlive SuccessfulExit false), and the plist is gone at the next boot.
    startBootoutAfterExit(process.pid);
    lines.push(`${DAEMON_LABEL} is booted out once this agent has ended`);
  }
  return lines;
}
