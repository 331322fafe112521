/**
 * Carries an enforcement plan out under ROOT, recording every file in the undo journal before its first
 * change, and undoes it all again (`undoAll`: unenroll and wipe).
 */

import { lstatSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import type { ProgramRunner } from "../facts/fact";
import { findProgram, programEnvironment, startProgram } from "../find-program";
import {
  type Journal,
  type JournalEntry,
  journalEntry,
  originalFrom,
  originalOf,
  readJournal,
  writeJournal,
} from "./journal";
import type { EnforcementOutcome, FileChange, MachineState, SettingPlan } from "./plan";
import { withoutHostsSection } from "./render-hosts";
import {
  createDirectories,
  missingDirectories,
  pathUnderRoot,
  readFileState,
  removeEmptyDirectories,
  removeFileDurably,
  textOf,
  writeFileAtomically,
} from "./safe-files";
import { MANAGED_FILES, TUNNEL_INTERFACE } from "./settings";
import { type InterfaceIdentity, tunnelInterface, tunnelOwnership } from "./tunnel-interface";

/** A command's exit code and output. */
export interface CommandResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** Runs a command (`argv`, with `stdin` as its input); tests pass their own. */
export type CommandRunner = (argv: string[], stdin?: string) => Promise<CommandResult>;

/** The package that brings each program the agent runs (Debian's and Fedora's names agree). */
const PACKAGES: Record<string, string> = {
  "wg-quick": "wireguard-tools",
  wg: "wireguard-tools",
  usbguard: "usbguard",
  systemctl: "systemd",
};

/** What to say when `program` is not on PATH: that, and which package to install. */
export function notInstalled(program: string): string {
  const from = PACKAGES[program];
  return `${program} is not installed${from ? `: install ${from}` : ""}`;
}

/**
 * Runs the command as a child process, without a shell; a program neither on PATH nor in the system's
 * program folders throws `notInstalled`.
 */
export const runCommand: CommandRunner = async (argv, stdin) => {
  const program = argv[0] ?? "";
  const found = findProgram(program);
  if (found === null) throw new Error(notInstalled(program));
  const child = await startProgram(() =>
    Bun.spawn([found, ...argv.slice(1)], {
      env: programEnvironment(),
      stdin: stdin === undefined ? "ignore" : Buffer.from(stdin),
      stdout: "pipe",
      stderr: "pipe",
      // On Windows the service's task never starts a second agent while one runs (IgnoreNew): a hung reg
      // or wireguard.exe must not hold the agent for ever.
      ...(process.platform === "win32" ? { timeout: 120_000, killSignal: "SIGKILL" as const } : {}),
    }),
  );
  const [stdout, stderr, exitCode] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  return { exitCode, stdout, stderr };
};

/** The runner as the fact readers take it: a program that is not installed exits 127 instead of throwing. */
export function programRunnerOf(runner: CommandRunner): ProgramRunner {
  return async (argv) => {
    try {
      const result = await runner(argv);
      return { code: result.exitCode, stdout: result.stdout, stderr: result.stderr };
    } catch (error) {
      return { code: 127, stdout: "", stderr: (error as Error).message };
    }
  };
}

/** A setting's outcome as the check-in reports it. */
export interface SettingResult {
  setting: SettingPlan["setting"];
  outcome: EnforcementOutcome;
  detail: string;
}

function exists(path: string): boolean {
  try {
    lstatSync(path);
    return true;
  } catch {
    return false;
  }
}

/**
 * Reads what the planner needs: the managed files under ROOT, the journal, usbguard, and whose the
 * tunnel's interface is (in `interfaces`; `broughtUp` is the one this enrollment brought up).
 */
export function readMachineState(
  root: string,
  stateDir: string,
  tunnel: { interfaces?: string; broughtUp: InterfaceIdentity | null },
): MachineState {
  const files: MachineState["files"] = {};
  for (const path of Object.values(MANAGED_FILES)) {
    try {
      const found = readFileState(pathUnderRoot(root, path));
      files[path] = found === null ? null : { text: textOf(found.bytes), mode: found.mode };
    } catch (error) {
      files[path] = { error: (error as Error).message };
    }
  }
  return {
    files,
    journal: readJournal(stateDir),
    tunnel: tunnelOwnership(tunnel.broughtUp, tunnel.interfaces),
    usbguardInstalled: ["usr/sbin/usbguard-daemon", "usr/bin/usbguard-daemon"].some((path) =>
      exists(join(root, path)),
    ),
  };
}

/** Puts back the journal's earlier file: its bytes and mode, or no file at all. */
function restoreOriginal(fullPath: string, entry: JournalEntry): void {
  const original = originalOf(entry);
  if (original === null) removeFileDurably(fullPath);
  else writeFileAtomically(fullPath, original.bytes, original.mode);
}

function forget(stateDir: string, journal: Journal, root: string, entry: JournalEntry): void {
  removeEmptyDirectories(root, entry.created_dirs);
  journal.files = journal.files.filter((other) => other.path !== entry.path);
  writeJournal(stateDir, journal);
}

export function applyChange(root: string, stateDir: string, journal: Journal, change: FileChange): void {
  const fullPath = pathUnderRoot(root, change.path);
  const entry = journalEntry(journal, change.path);
  if (!change.release) {
    const missing = missingDirectories(root, change.path);
    // Recorded before anything changes: a crash after this line leaves a journal that undoes it.
    if (entry === undefined) {
      const original = originalFrom(readFileState(fullPath));
      journal.files.push({ path: change.path, kind: change.kind, original, created_dirs: missing });
      writeJournal(stateDir, journal);
    } else if (missing.length > 0) {
      entry.created_dirs.push(...missing);
      writeJournal(stateDir, journal);
    }
    createDirectories(root, missing);
    writeFileAtomically(fullPath, Buffer.from(change.after ?? ""), change.mode);
    return;
  }
  if (change.restoreOriginal && entry !== undefined) restoreOriginal(fullPath, entry);
  else if (change.after === null) removeFileDurably(fullPath);
  else writeFileAtomically(fullPath, Buffer.from(change.after), change.mode);
  if (entry !== undefined) forget(stateDir, journal, root, entry);
}

async function runOrThrow(runner: CommandRunner, argv: string[], stdin?: string): Promise<string> {
  const result = await runner(argv, stdin);
  if (result.exitCode !== 0)
    throw new Error(`${argv.join(" ")} failed (exit ${result.exitCode}): ${result.stderr.trim()}`);
  return result.stdout;
}

/** What applying a plan did: every setting's outcome, and the tunnel's interface the agent brought up. */
export interface Applied {
  results: SettingResult[];
  /** After `wg-quick up`, the interface it made; null after `wg-quick down`; else `broughtUp` as given. */
  broughtUp: InterfaceIdentity | null;
}

/**
 * Applies each setting's file changes and tunnel actions; a setting that cannot be applied ends `failed`
 * with the error, and the others go on.
 */
export async function applyPlan(
  plans: readonly SettingPlan[],
  target: {
    root: string;
    stateDir: string;
    runner?: CommandRunner;
    interfaces?: string;
    broughtUp: InterfaceIdentity | null;
  },
): Promise<Applied> {
  const { root, stateDir } = target;
  const runner = target.runner ?? runCommand;
  let broughtUp = target.broughtUp;
  if (plans.some((plan) => plan.changes.length > 0)) mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const journal = readJournal(stateDir);
  const results: SettingResult[] = [];
  for (const plan of plans) {
    const { setting, outcome, detail } = plan;
    if (outcome === "failed") {
      results.push({ setting, outcome, detail });
      continue;
    }
    try {
      const conf = pathUnderRoot(root, MANAGED_FILES.wireguard);
      if (plan.tunnel.includes("down")) {
        await runOrThrow(runner, ["wg-quick", "down", conf]);
        broughtUp = null;
      }
      for (const change of plan.changes) applyChange(root, stateDir, journal, change);
      if (plan.tunnel.includes("up")) {
        await runOrThrow(runner, ["wg-quick", "up", conf]);
        broughtUp = tunnelInterface(target.interfaces);
      }
      if (plan.tunnel.includes("syncconf")) {
        const stripped = await runOrThrow(runner, ["wg-quick", "strip", conf]);
        await runOrThrow(runner, ["wg", "syncconf", TUNNEL_INTERFACE, "/dev/stdin"], stripped);
      }
      results.push({ setting, outcome, detail });
    } catch (error) {
      results.push({ setting, outcome: "failed", detail: (error as Error).message });
    }
  }
  return { results, broughtUp };
}

/** Takes the agent's section out of a file it shares (/etc/hosts), giving back the earlier file when nothing else changed. */
function undoSection(fullPath: string, entry: JournalEntry): void {
  const current = readFileState(fullPath);
  if (current === null) {
    restoreOriginal(fullPath, entry);
    return;
  }
  const text = textOf(current.bytes);
  if (text === null)
    throw new Error(`${fullPath} is no longer UTF-8 text; its bulwark section is left in it`);
  const original = originalOf(entry);
  const originalText = original === null ? null : (textOf(original.bytes) ?? undefined);
  const after = withoutHostsSection(text, originalText);
  if (originalText !== undefined && after === originalText) restoreOriginal(fullPath, entry);
  else if (after === null) removeFileDurably(fullPath);
  else writeFileAtomically(fullPath, Buffer.from(after), current.mode);
}

/** What `undoAll` did: the paths restored, and those it could not restore (kept in the journal). */
export interface UndoResult {
  restored: string[];
  failed: { path: string; error: string }[];
}

/**
 * Undoes every change of the journal, newest first: each file gets back its earlier bytes and mode (or
 * is deleted when there was none), the agent's directories go when empty, and the journal forgets each
 * file as soon as it is restored, so that an undo cut short by a crash resumes where it stopped.
 * Running it again is harmless. `afterEachFile` lets tests stop it between two files.
 */
export function undoAll(
  root: string,
  stateDir: string,
  hooks: { afterEachFile?: (path: string) => void } = {},
): UndoResult {
  const journal = readJournal(stateDir);
  const result: UndoResult = { restored: [], failed: [] };
  for (const entry of [...journal.files].reverse()) {
    try {
      const fullPath = pathUnderRoot(root, entry.path);
      if (entry.kind === "section") undoSection(fullPath, entry);
      else restoreOriginal(fullPath, entry);
      forget(stateDir, journal, root, entry);
      result.restored.push(entry.path);
    } catch (error) {
      result.failed.push({ path: entry.path, error: (error as Error).message });
      continue;
    }
    hooks.afterEachFile?.(entry.path);
  }
  return result;
}
