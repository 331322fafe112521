/**
 * `bulwark agent install-service` on Windows: the agent as a scheduled task of the Task Scheduler that
 * runs as SYSTEM, rather than a Windows service. The service control manager only starts a program that
 * connects to it (StartServiceCtrlDispatcher) within 30 s, else error 1053; the Bun runtime has no such
 * dispatcher, and a wrapper such as WinSW would be a second executable to ship and trust. A task needs
 * neither: `schtasks /Create /XML` registers a definition (the Task Scheduler schema) that starts
 * `bulwark.exe agent run` at boot as SYSTEM.
 *
 * What the definition says, and why:
 * - a BootTrigger, and a TimeTrigger repeating every minute for ever: RestartOnFailure only retries a
 *   task that could not be started (a start condition not met, an action that failed to start: MS-TSCH
 *   2.5.4.2), never one whose process exited, so the minute's trigger is what brings a crashed agent
 *   back; with MultipleInstancesPolicy IgnoreNew it does nothing while the agent runs. (An agent with no
 *   enrollment exits 6 and is started again each minute: after `bulwark agent enroll` it is running
 *   within a minute, with nothing else to do.)
 * - RestartOnFailure every minute, 255 times (the schema's limit), for a start that failed;
 * - ExecutionTimeLimit PT0S: the default stops a task after 72 hours;
 * - DisallowStartIfOnBatteries and StopIfGoingOnBatteries false (both default to true), StartWhenAvailable;
 * - Principal S-1-5-18 (SYSTEM, by SID: account names are translated) with RunLevel HighestAvailable.
 *
 * The file is UTF-16 LE with a byte-order mark, as Windows exports it: schtasks reads such a file as
 * UTF-16 and anything else in the ANSI code page (Wine's schtasks does exactly that), and Windows'
 * rejects UTF-8 whatever its declaration says.
 *
 * Every command (schtasks, icacls) goes through a CommandRunner, by its full path under %SystemRoot%:
 * Windows looks for a bare name in the current folder first.
 */
import { createHash } from "node:crypto";
import {
  copyFileSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  unlinkSync,
} from "node:fs";
import { join, resolve } from "node:path";
import { escapeXml } from "../../lib/escape-xml";
import { type CommandRunner, runCommand as runSystemCommand } from "../enforce/apply";
import { sha256OfFile, writeFileAtomically } from "../enforce/safe-files";
import { AgentExit } from "../enroll-command";

/** The scheduled task's name: the task `Agent` in the Task Scheduler folder `Bulwark`. */
export const TASK_NAME = "Bulwark\\Agent";

/** The task definition install-service writes to the state folder and gives to schtasks. */
const TASK_DEFINITION = "agent-task.xml";

/** The environment the paths come from: `ProgramFiles`, `ProgramData` and `SystemRoot`. */
export type WindowsEnvironment = Record<string, string | undefined>;

/** Where the agent lives on Windows. */
export interface WindowsAgentPaths {
  /** `%ProgramFiles%\Bulwark`, which install-service creates and unenroll removes when empty. */
  installFolder: string;
  /** `%ProgramFiles%\Bulwark\bulwark.exe`, the copy the task starts. */
  executable: string;
  /** `%ProgramData%\Bulwark`, the default state folder (SYSTEM and Administrators only). */
  stateDir: string;
}

/** A file install-service wrote: its path and the SHA-256 of what it wrote. */
export interface InstalledFile {
  path: string;
  sha256: string;
}

/**
 * What install-service installed on Windows (the caller keeps it as STATE/service.json), so that
 * unenroll takes away exactly that.
 */
export interface InstalledWindowsService {
  kind: "windows-scheduled-task";
  /** The scheduled task (`Bulwark\Agent`). */
  task: string;
  /** The task definition given to `schtasks /Create /XML`, in the state folder. */
  definition: InstalledFile;
  /** The copy in the install folder; null when it already was this executable, not copied by this install. */
  executable: InstalledFile | null;
  /** Removed by unenroll once empty. */
  installFolder: string;
}

/** The paths of `windowsAgentPaths`, from `env` (Windows' own defaults when a variable is missing). */
export function windowsAgentPaths(env: WindowsEnvironment = process.env): WindowsAgentPaths {
  const installFolder = join(env.ProgramFiles ?? "C:\\Program Files", "Bulwark");
  return {
    installFolder,
    executable: join(installFolder, "bulwark.exe"),
    stateDir: join(env.ProgramData ?? "C:\\ProgramData", "Bulwark"),
  };
}

/** A program of `%SystemRoot%\System32`, by its full path. */
function systemProgram(env: WindowsEnvironment, name: string): string {
  return `${env.SystemRoot ?? "C:\\Windows"}\\System32\\${name}`;
}

/**
 * `argument` in double quotes as the Microsoft C runtime (CommandLineToArgvW) reads it back: a quote is
 * preceded by a backslash, and the backslashes before a quote (the closing one included) are doubled.
 */
export function quoteWindowsArgument(argument: string): string {
  let quoted = '"';
  let backslashes = 0;
  for (const character of argument) {
    if (character === "\\") {
      backslashes += 1;
      continue;
    }
    quoted +=
      character === '"' ? `${"\\".repeat(backslashes * 2 + 1)}"` : `${"\\".repeat(backslashes)}${character}`;
    backslashes = 0;
  }
  return `${quoted}${"\\".repeat(backslashes * 2)}"`;
}

/**
 * A path the task's action can carry as it is: no double quote (Windows allows none in a name) and no
 * `%`, which the Task Scheduler expands as an environment variable in Command and Arguments.
 */
function checkActionPath(what: string, path: string): void {
  if (/["%]/.test(path) || /\p{Cc}/u.test(path))
    throw new AgentExit(
      `${what} ${path}: a path with ", % or a control character cannot be started by the task`,
      2,
    );
}

/**
 * The task definition (Task Scheduler schema 1.2): at boot and every minute, as SYSTEM, it starts
 * `"<executable>" agent run --state-dir "<stateDir>"`; the module's comment says why each setting.
 */
export function agentTaskXml(options: { executable: string; stateDir: string }): string {
  checkActionPath("executable", options.executable);
  checkActionPath("state folder", options.stateDir);
  const command = `"${options.executable}"`;
  const argumentsLine = `agent run --state-dir ${quoteWindowsArgument(options.stateDir)}`;
  return `<?xml version="1.0" encoding="UTF-16"?>
<Task version="1.2" xmlns="http://schemas.microsoft.com/windows/2004/02/mit/task">
  <RegistrationInfo>
    <Author>Bulwark</Author>
    <Description>Bulwark device agent: checks in with the Bulwark server and enforces its policy. Installed by bulwark agent install-service, removed by bulwark agent unenroll.</Description>
    <URI>\\${escapeXml(TASK_NAME)}</URI>
  </RegistrationInfo>
  <Triggers>
    <BootTrigger>
      <Enabled>true</Enabled>
    </BootTrigger>
    <TimeTrigger>
      <Repetition>
        <Interval>PT1M</Interval>
        <StopAtDurationEnd>false</StopAtDurationEnd>
      </Repetition>
      <StartBoundary>2000-01-01T00:00:00</StartBoundary>
      <Enabled>true</Enabled>
    </TimeTrigger>
  </Triggers>
  <Principals>
    <Principal id="Author">
      <UserId>S-1-5-18</UserId>
      <RunLevel>HighestAvailable</RunLevel>
    </Principal>
  </Principals>
  <Settings>
    <MultipleInstancesPolicy>IgnoreNew</MultipleInstancesPolicy>
    <DisallowStartIfOnBatteries>false</DisallowStartIfOnBatteries>
    <StopIfGoingOnBatteries>false</StopIfGoingOnBatteries>
    <AllowHardTerminate>true</AllowHardTerminate>
    <StartWhenAvailable>true</StartWhenAvailable>
    <RunOnlyIfNetworkAvailable>false</RunOnlyIfNetworkAvailable>
    <AllowStartOnDemand>true</AllowStartOnDemand>
    <Enabled>true</Enabled>
    <Hidden>false</Hidden>
    <RunOnlyIfIdle>false</RunOnlyIfIdle>
    <WakeToRun>false</WakeToRun>
    <ExecutionTimeLimit>PT0S</ExecutionTimeLimit>
    <Priority>7</Priority>
    <RestartOnFailure>
      <Interval>PT1M</Interval>
      <Count>255</Count>
    </RestartOnFailure>
  </Settings>
  <Actions Context="Author">
    <Exec>
      <Command>${escapeXml(command)}</Command>
      <Arguments>${escapeXml(argumentsLine)}</Arguments>
    </Exec>
  </Actions>
</Task>
`.replaceAll("\n", "\r\n");
}

/** The definition as the file schtasks reads: UTF-16 LE after a byte-order mark. */
export function taskDefinitionBytes(xml: string): Uint8Array {
  return Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(xml, "utf16le")]);
}

/** `argv` as a person would type it, for messages. */
function commandLine(argv: string[]): string {
  const [program = "", ...rest] = argv;
  const name =
    program
      .split("\\")
      .at(-1)
      ?.replace(/\.exe$/i, "") ?? program;
  return [
    name,
    ...rest.map((argument) => (/[\s"]/.test(argument) ? quoteWindowsArgument(argument) : argument)),
  ].join(" ");
}

/** A command's output for a message: what it printed, trimmed, at most 2,000 characters. */
function outputOf(result: { exitCode: number; stdout: string; stderr: string }): string {
  const printed = `${result.stdout}\n${result.stderr}`.replaceAll("\r\n", "\n").trim();
  if (printed === "") return `exit ${result.exitCode}, no output`;
  const shown = printed.length > 2000 ? `${printed.slice(0, 2000)}...` : printed;
  return `exit ${result.exitCode}: ${shown}`;
}

/** Runs `argv`; the outcome is its result, or the reason it could not be started. */
async function runStep(
  runner: CommandRunner,
  argv: string[],
): Promise<{ exitCode: number; stdout: string; stderr: string } | { failure: string }> {
  try {
    return await runner(argv);
  } catch (error) {
    return { failure: `${commandLine(argv)} could not be started: ${(error as Error).message}` };
  }
}

/** Runs `argv` and returns its standard output; a failure throws the command and its output (exit 1). */
async function runOrFail(runner: CommandRunner, argv: string[]): Promise<string> {
  const outcome = await runStep(runner, argv);
  if ("failure" in outcome) throw new AgentExit(outcome.failure, 1);
  if (outcome.exitCode !== 0) throw new AgentExit(`${commandLine(argv)} failed (${outputOf(outcome)})`, 1);
  return outcome.stdout;
}

/** Whether `argv` ran and exited 0: for a step whose failure changes nothing (ending a task not running). */
async function runQuietly(runner: CommandRunner, argv: string[]): Promise<boolean> {
  const outcome = await runStep(runner, argv);
  return !("failure" in outcome) && outcome.exitCode === 0;
}

/** One entry of an `icacls` listing: who, and the rights as icacls prints them (`(OI)(CI)(F)`). */
export interface AccessEntry {
  principal: string;
  rights: string;
}

/**
 * The entries of `icacls PATH`'s listing: the first line is the path then an entry, each further entry
 * is on its own indented line, and a blank line ends them (before the "Successfully processed" line).
 * Empty when the output holds no listing of `path`.
 */
export function parseIcaclsListing(output: string, path: string): AccessEntry[] {
  const lines = output.replaceAll("\r\n", "\n").split("\n");
  const first = lines.findIndex((line) => line.toLowerCase().startsWith(`${path.toLowerCase()} `));
  if (first === -1) return [];
  const entries: AccessEntry[] = [];
  for (let index = first; index < lines.length; index += 1) {
    const text = (index === first ? (lines[index] ?? "").slice(path.length) : (lines[index] ?? "")).trim();
    if (text === "") break;
    const match = text.match(/^(.*?):((?:\([^)]*\))+)$/);
    if (match === null) break;
    entries.push({ principal: match[1] ?? "", rights: match[2] ?? "" });
  }
  return entries;
}

/** SYSTEM and Administrators as an English Windows' icacls names them, or by SID. */
const ADMINISTRATIVE_NAMES = new Set(
  [
    "NT AUTHORITY\\SYSTEM",
    "BUILTIN\\Administrators",
    "S-1-5-18",
    "*S-1-5-18",
    "S-1-5-32-544",
    "*S-1-5-32-544",
  ].map((name) => name.toLowerCase()),
);

/** What `restrictToAdministrators` grants, as icacls lists it on a folder. */
const FULL_INHERITED_BY_ALL = "(OI)(CI)(F)";

/**
 * Makes `path` (a folder) readable and writable by SYSTEM and Administrators only: Administrators
 * become its owner (a folder someone else created under ProgramData stays theirs to re-open otherwise),
 * then `icacls PATH /inheritance:r /grant:r *S-1-5-18:(OI)(CI)F *S-1-5-32-544:(OI)(CI)F` (by SID: names
 * are translated), then `icacls PATH` reads it back. The listing must hold exactly two entries, both
 * `(OI)(CI)(F)` and none inherited: since both SIDs were just granted, those two are SYSTEM and
 * Administrators whatever language the names are in. Anything else fails (exit 1), naming the entries.
 */
export async function restrictToAdministrators(
  path: string,
  runner: CommandRunner = runSystemCommand,
  env: WindowsEnvironment = process.env,
): Promise<void> {
  const icacls = systemProgram(env, "icacls.exe");
  await runOrFail(runner, [icacls, path, "/setowner", "*S-1-5-32-544"]);
  await runOrFail(runner, [
    icacls,
    path,
    "/inheritance:r",
    "/grant:r",
    "*S-1-5-18:(OI)(CI)F",
    "*S-1-5-32-544:(OI)(CI)F",
  ]);
  const listing = await runOrFail(runner, [icacls, path]);
  const entries = parseIcaclsListing(listing, path);
  if (entries.length === 0)
    throw new AgentExit(
      `icacls ${path} printed no access list, so its access cannot be checked (output: ${JSON.stringify(listing.trim())})`,
      1,
    );
  const isRestricted =
    entries.length === 2 && entries.every((entry) => entry.rights === FULL_INHERITED_BY_ALL);
  if (isRestricted) return;
  const others = entries.filter(
    (entry) =>
      entry.rights !== FULL_INHERITED_BY_ALL || !ADMINISTRATIVE_NAMES.has(entry.principal.toLowerCase()),
  );
  const named = (others.length > 0 ? others : entries).map((entry) => `${entry.principal}:${entry.rights}`);
  throw new AgentExit(
    `${path} is not restricted to SYSTEM and Administrators: icacls still lists ${named.join(", ")}`,
    1,
  );
}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException).code;
}

/** The one line for a file this process may not write: run it elevated. */
function permissionProblem(error: unknown, path: string): AgentExit | null {
  const code = errorCode(error);
  if (code !== "EACCES" && code !== "EPERM") return null;
  return new AgentExit(
    `cannot write ${path}: permission denied; run it from an elevated prompt (as Administrator)`,
    1,
  );
}

/**
 * Copies `source` over `target` through a temporary file beside it, so that the target is the old file
 * or the new one. Windows refuses to replace an executable that is running: the rename is tried for
 * five seconds (the task was just ended, its process may take a moment to exit).
 */
async function copyExecutable(source: string, target: string): Promise<void> {
  const temporary = `${target}.${process.pid}.tmp`;
  try {
    copyFileSync(source, temporary);
    for (let attempt = 1; ; attempt += 1) {
      try {
        renameSync(temporary, target);
        return;
      } catch (error) {
        const code = errorCode(error);
        const isInUse = code === "EBUSY" || code === "EPERM" || code === "EACCES";
        if (!isInUse || attempt === 10) {
          throw isInUse
            ? new AgentExit(
                `cannot replace ${target} (${code}): it is in use; schtasks /End /TN "${TASK_NAME}", then run install-service again`,
                1,
              )
            : error;
        }
        await Bun.sleep(500);
      }
    }
  } finally {
    rmSync(temporary, { force: true });
  }
}

/** The bytes of `path`, or null when there is no such file. */
function bytesIfPresent(path: string): Uint8Array | null {
  try {
    return readFileSync(path);
  } catch (error) {
    if (errorCode(error) === "ENOENT") return null;
    throw error;
  }
}

/**
 * `bulwark.exe agent install-service` on Windows, elevated. In order: ends the task if it runs (its
 * executable may be replaced, its new definition take effect); copies `executableSource` (the running
 * executable) to `%ProgramFiles%\Bulwark\bulwark.exe` unless that already is this file (by SHA-256);
 * creates the state folder and restricts it to SYSTEM and Administrators (before anything is written
 * there or started); writes the task definition to STATE\agent-task.xml; `schtasks /Create /TN
 * "Bulwark\Agent" /XML FILE /F`; `schtasks /Run`. Returns the record for STATE/service.json and the
 * lines to say. When a step fails, what this run created is taken away again and the error names the
 * command and its output (exit 1; exit 2 for a path the task cannot carry).
 */
export async function installWindowsService(
  options: {
    executableSource?: string;
    stateDir?: string;
    env?: WindowsEnvironment;
    runner?: CommandRunner;
    /** STATE/service.json as an earlier install-service left it. */
    previous?: InstalledWindowsService | null;
  } = {},
): Promise<{ record: InstalledWindowsService; lines: string[] }> {
  const env = options.env ?? process.env;
  const runner = options.runner ?? runSystemCommand;
  const paths = windowsAgentPaths(env);
  const schtasks = systemProgram(env, "schtasks.exe");
  const source = resolve(options.executableSource ?? process.execPath);
  const stateDir = resolve(options.stateDir ?? paths.stateDir);
  if (!existsSync(source)) throw new AgentExit(`${source}: no such executable`, 1);
  if (existsSync(stateDir) && lstatSync(stateDir).isSymbolicLink())
    throw new AgentExit(`${stateDir} is a link or junction: the state folder must be a folder of its own`, 2);
  const xml = agentTaskXml({ executable: paths.executable, stateDir });
  const definitionPath = join(stateDir, TASK_DEFINITION);

  const lines: string[] = [];
  /** What this run created, taken away newest first when a later step fails. */
  const undo: (() => Promise<void> | void)[] = [];
  const takeBack = async () => {
    for (const step of undo.reverse()) {
      try {
        await step();
      } catch {
        // Going on with the rest: the error that made this run fail is the one to say.
      }
    }
  };

  let writing = paths.executable;
  try {
    await runQuietly(runner, [schtasks, "/End", "/TN", TASK_NAME]);

    const sourceDigest = sha256OfFile(source);
    const isThere = existsSync(paths.executable);
    let executable: InstalledFile | null;
    if (isThere && sha256OfFile(paths.executable) === sourceDigest) {
      lines.push(`${paths.executable} is already this executable`);
      // Still the copy an earlier install-service made: unenroll removes it.
      executable = options.previous?.executable?.sha256 === sourceDigest ? options.previous.executable : null;
    } else {
      if (!existsSync(paths.installFolder)) {
        mkdirSync(paths.installFolder, { recursive: true });
        undo.push(() => rmdirSync(paths.installFolder));
      }
      await copyExecutable(source, paths.executable);
      if (!isThere) undo.push(() => unlinkSync(paths.executable));
      lines.push(`Installed ${paths.executable}, a copy of ${source}`);
      executable = { path: paths.executable, sha256: sourceDigest };
    }

    writing = stateDir;
    if (!existsSync(stateDir)) {
      mkdirSync(stateDir, { recursive: true });
      undo.push(() => rmSync(stateDir, { recursive: true, force: true }));
    }
    await restrictToAdministrators(stateDir, runner, env);
    lines.push(`${stateDir} is readable by SYSTEM and Administrators only`);

    writing = definitionPath;
    const bytes = taskDefinitionBytes(xml);
    const definitionBefore = bytesIfPresent(definitionPath);
    writeFileAtomically(definitionPath, bytes, 0o600);
    undo.push(() =>
      definitionBefore === null
        ? unlinkSync(definitionPath)
        : writeFileAtomically(definitionPath, definitionBefore, 0o600),
    );

    await runOrFail(runner, [schtasks, "/Create", "/TN", TASK_NAME, "/XML", definitionPath, "/F"]);
    if (!options.previous)
      undo.push(async () => void (await runQuietly(runner, [schtasks, "/Delete", "/TN", TASK_NAME, "/F"])));
    lines.push(
      `Registered the scheduled task ${TASK_NAME}: at boot as SYSTEM, ${paths.executable} agent run`,
    );

    await runOrFail(runner, [schtasks, "/Run", "/TN", TASK_NAME]);
    const note = source === resolve(paths.executable) ? "" : ` (${source} is no longer needed)`;
    lines.push(`${TASK_NAME} is started: schtasks /Query /TN "${TASK_NAME}" /V /FO LIST${note}`);
    return {
      record: {
        kind: "windows-scheduled-task",
        task: TASK_NAME,
        definition: { path: definitionPath, sha256: createHash("sha256").update(bytes).digest("hex") },
        executable,
        installFolder: paths.installFolder,
      },
      lines,
    };
  } catch (error) {
    await takeBack();
    if (error instanceof AgentExit)
      throw new AgentExit(`${error.message}; what this run changed is undone`, error.exitCode);
    throw (
      permissionProblem(error, writing) ??
      new AgentExit(`cannot write ${writing}: ${(error as Error).message}`, 1)
    );
  }
}

/**
 * Takes away what `installWindowsService` installed (its record), for unenroll: `schtasks /End` (unless
 * called from the task itself: that would end this process), `schtasks /Delete /TN "Bulwark\Agent" /F`
 * (a task already gone is fine: `schtasks /Query` says so), then the copied executable and the task
 * definition, each only when its SHA-256 is still the one installed, and the install folder once empty.
 * Returns the lines to say; a task that could not be deleted throws (exit 1: run unenroll again).
 */
export async function removeWindowsService(
  record: InstalledWindowsService,
  runner: CommandRunner = runSystemCommand,
  options: { env?: WindowsEnvironment; fromService?: boolean } = {},
): Promise<string[]> {
  const schtasks = systemProgram(options.env ?? process.env, "schtasks.exe");
  const lines: string[] = [];
  if (!options.fromService) await runQuietly(runner, [schtasks, "/End", "/TN", record.task]);
  const deletion = [schtasks, "/Delete", "/TN", record.task, "/F"];
  const deleted = await runStep(runner, deletion);
  if ("failure" in deleted || deleted.exitCode !== 0) {
    const isGone = !(await runQuietly(runner, [schtasks, "/Query", "/TN", record.task]));
    if (!isGone) {
      const reason =
        "failure" in deleted ? deleted.failure : `${commandLine(deletion)} failed (${outputOf(deleted)})`;
      throw new AgentExit(`${reason}; run bulwark agent unenroll again`, 1);
    }
    lines.push(`The scheduled task ${record.task} was already gone`);
  } else lines.push(`Deleted the scheduled task ${record.task}`);

  for (const installed of [record.executable, record.definition]) {
    if (installed === null || !existsSync(installed.path)) continue;
    if (sha256OfFile(installed.path) !== installed.sha256) {
      lines.push(`${installed.path} changed since install-service: left as it is`);
      continue;
    }
    try {
      unlinkSync(installed.path);
      lines.push(`Removed ${installed.path}`);
    } catch (error) {
      lines.push(
        `${installed.path} could not be removed (${errorCode(error) ?? (error as Error).message}): left`,
      );
    }
  }
  const folder = record.installFolder;
  if (existsSync(folder)) {
    if (readdirSync(folder).length > 0) lines.push(`${folder} is not empty: left`);
    else {
      rmdirSync(folder);
      lines.push(`Removed ${folder}`);
    }
  }
  return lines;
}
