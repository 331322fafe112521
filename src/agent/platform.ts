/**
 * What differs between the systems the agent runs on, in one table per platform: how facts are read, how
 * a policy is enforced and undone, how the tunnel is taken down and the work profile erased, and what
 * the machine is called. The loop (run/cycle.ts), the state folder, the journal, the API client and the
 * answers' validation are shared; the platform is chosen once, at run time, from `process.platform`.
 */
import { existsSync, lstatSync, realpathSync } from "node:fs";
import { hostname } from "node:os";
import { join, win32 } from "node:path";
import type { PolicyData } from "../domain/policies/policy-document";
import { type CommandRunner, programRunnerOf, type UndoResult, undoAll } from "./enforce/apply";
import { type EnforceRequest, type EnforceResult, enforcePolicy } from "./enforce/enforce";
import { JOURNAL_FILE } from "./enforce/journal";
import { type EnforcementFacts, reportFromFacts } from "./enforce/plan";
import { type CollectedFacts, type CollectOptions, collectFacts } from "./facts/collect-facts";
import { readIfPresent, StateFolderError, type StatePaths, statePaths } from "./identity/state-folder";
import { collectMacosFacts } from "./macos/collect";
import { enforceMacosPolicy, undoMacos } from "./macos/enforce";
import { macosReportFromFacts } from "./macos/plan";
import { MACOS_STATE_DIR, PROGRAMS } from "./macos/settings";
import { type ErasureReport, eraseWorkTargets, workTargets } from "./run/erase-work-profile";
import { collectWindowsFacts } from "./windows/collect";
import { enforceWindowsPolicy, undoWindows, WINDOWS_TUNNEL_MARK } from "./windows/enforce";
import { windowsReportFromFacts } from "./windows/plan";
import { readRegistryKey, registryValue } from "./windows/registry";
import { CRYPTOGRAPHY_KEY, TUNNEL_NAME, TUNNEL_SERVICE, windowsFolders } from "./windows/settings";

export type PlatformName = "linux" | "windows" | "macos";

/** What one platform does for the shared loop. */
export interface AgentPlatform {
  name: PlatformName;
  /** The `--root` and `--state-dir` defaults. */
  defaultRoot: () => string;
  defaultStateDir: () => string;
  collectFacts: (root: string, options?: CollectOptions) => Promise<CollectedFacts>;
  enforce: (request: EnforceRequest) => Promise<EnforceResult>;
  /** A setting whose outcome comes from the facts, planned again after enforcement changed them. */
  reportFromFacts: (
    setting: string,
    input: { policy: PolicyData; facts: EnforcementFacts },
  ) => { outcome: EnforceResult["results"][number]["outcome"]; detail: string } | null;
  /** Undoes every enforcement the journal records (unenroll, wipe). */
  undo: (root: string, stateDir: string, runner: CommandRunner) => Promise<UndoResult>;
  /** Erases the work profile: the policy's work paths and enrollment's --work-dir folders. */
  erase: (
    root: string,
    workPaths: readonly string[],
    workDirs: readonly string[],
    runner: CommandRunner,
  ) => Promise<ErasureReport>;
  /** The machine's name and a stable id of it, for enrollment (null when unknown). */
  identity: (
    root: string,
    runner: CommandRunner,
  ) => Promise<{ name: string | null; hardwareId: string | null }>;
  /**
   * Keeps the state folder to the system's administrators (Linux: its 0700 mode does; Windows: an ACL),
   * before anything is written in it; returns a warning to print, or throws when it cannot.
   */
  secureStateFolder: (stateDir: string, runner: CommandRunner) => Promise<string | null>;
}

/** The machine's name: ROOT/etc/hostname (first line), or null. */
function linuxHostName(root: string): string | null {
  return readIfPresent(join(root, "etc/hostname"))?.split("\n")[0]?.trim() || null;
}

/**
 * A stable id of the machine: the firmware's product UUID (ROOT/sys/class/dmi/id/product_uuid), else
 * the OS installation's machine id (ROOT/etc/machine-id); null when neither is readable.
 */
function linuxHardwareId(root: string): string | null {
  const readable = (path: string) => {
    try {
      return readIfPresent(join(root, path))?.trim().toLowerCase() || null;
    } catch {
      return null; // product_uuid is readable by root only
    }
  };
  return readable("sys/class/dmi/id/product_uuid") ?? readable("etc/machine-id");
}

export const LINUX: AgentPlatform = {
  name: "linux",
  defaultRoot: () => "/",
  defaultStateDir: () => "/var/lib/bulwark-agent",
  collectFacts,
  enforce: enforcePolicy,
  reportFromFacts,
  undo: async (root, stateDir) => undoAll(root, stateDir),
  erase: async (root, workPaths, workDirs) => eraseWorkTargets(workTargets(root, workPaths, workDirs)),
  identity: async (root) => ({ name: linuxHostName(root), hardwareId: linuxHardwareId(root) }),
  secureStateFolder: async () => null,
};

export const WINDOWS: AgentPlatform = {
  name: "windows",
  defaultRoot: () => `${process.env.SystemDrive ?? "C:"}\\`,
  defaultStateDir: () => win32.join(process.env.ProgramData ?? "C:\\ProgramData", "Bulwark"),
  collectFacts: (_root, options) => collectWindowsFacts(options),
  enforce: enforceWindowsPolicy,
  reportFromFacts: windowsReportFromFacts,
  undo: (_root, stateDir, runner) => undoWindows(stateDir, runner),
  erase: async (_root, workPaths, workDirs, runner) => {
    const { eraseWindowsWorkProfile } = await import("./windows/wipe");
    return eraseWindowsWorkProfile(workPaths, workDirs, programRunnerOf(runner));
  },
  identity: async (_root, runner) => {
    const key = await readRegistryKey(programRunnerOf(runner), CRYPTOGRAPHY_KEY).catch(() => null);
    const guid = registryValue(key, "MachineGuid")?.data.trim().toLowerCase() || null;
    return { name: process.env.COMPUTERNAME?.trim() || hostname() || null, hardwareId: guid };
  },
  secureStateFolder: async (stateDir, runner) => {
    // A user may make folders in ProgramData: one made before enrollment, a junction, or one holding an
    // undo journal without an enrollment is not the agent's to trust (its journal would be undone as SYSTEM).
    const real = realpathSync.native(stateDir);
    if (lstatSync(stateDir).isSymbolicLink() || real.toLowerCase() !== win32.resolve(stateDir).toLowerCase())
      throw new StateFolderError(
        `${stateDir} is a link or junction: the state folder must be a folder of its own`,
      );
    const paths = statePaths(stateDir);
    const planted = [join(stateDir, JOURNAL_FILE), join(stateDir, "wipe.json")].filter((path) =>
      existsSync(path),
    );
    if (planted.length > 0 && !existsSync(paths.state))
      throw new StateFolderError(
        `${stateDir} holds ${planted.join(" and ")} but no enrollment: the agent did not leave them; remove the folder (as an administrator) and enroll again`,
      );
    const { restrictToAdministrators } = await import("./windows/service");
    try {
      await restrictToAdministrators(stateDir, runner);
      return null;
    } catch (error) {
      // Wine keeps no ACLs (its icacls does nothing): said, not fatal, there only.
      const isWine =
        (await readRegistryKey(programRunnerOf(runner), "HKLM\\Software\\Wine").catch(() => null)) !== null;
      if (!isWine) throw error;
      return `Warning: this is Wine, which keeps no file ACLs: ${stateDir} is not restricted to SYSTEM and Administrators`;
    }
  },
};

/** The IOPlatformUUID in `ioreg -rd1 -c IOPlatformExpertDevice` output (`"IOPlatformUUID" = "..."`), or null. */
export function platformUuidOf(output: string): string | null {
  return /"IOPlatformUUID"\s*=\s*"([0-9A-Fa-f-]{36})"/.exec(output)?.[1]?.toLowerCase() ?? null;
}

export const MACOS: AgentPlatform = {
  name: "macos",
  defaultRoot: () => "/",
  defaultStateDir: () => MACOS_STATE_DIR,
  collectFacts: collectMacosFacts,
  enforce: enforceMacosPolicy,
  reportFromFacts: macosReportFromFacts,
  undo: undoMacos,
  // The eraser walks folders through /proc/self/fd, which macOS lacks: every path is said not erased.
  erase: async (_root, workPaths, workDirs) => {
    const detail = "not erased: work paths are not erased on macOS in this version";
    const paths = [...workPaths, ...workDirs].map((path) => ({
      path,
      outcome: "failed" as const,
      files: 0,
      bytes: 0,
      folders: 0,
      detail,
    }));
    return { paths, files: 0, bytes: 0, failures: paths.map((entry) => `${entry.path}: ${detail}`) };
  },
  identity: async (root, runner) => {
    const run = programRunnerOf(runner);
    const isLive = root === "/";
    // The name people see (System Settings > General > Sharing), else the host name.
    const named = isLive ? await run([PROGRAMS.scutil, "--get", "ComputerName"]) : null;
    const name = (named?.code === 0 ? named.stdout.trim() : "") || hostname() || null;
    const ioreg = isLive ? await run([PROGRAMS.ioreg, "-rd1", "-c", "IOPlatformExpertDevice"]) : null;
    return { name, hardwareId: ioreg?.code === 0 ? platformUuidOf(ioreg.stdout) : null };
  },
  secureStateFolder: async () => null,
};

/** The platform this agent runs on; anything but Windows and macOS is run as Linux (the CLI refuses the others). */
export function currentPlatform(): AgentPlatform {
  if (process.platform === "win32") return WINDOWS;
  return process.platform === "darwin" ? MACOS : LINUX;
}

/** The tunnel's service or interface, taken down at unenroll and wipe when this enrollment brought it up. */
export async function takeWindowsTunnelDown(
  paths: StatePaths,
  broughtUp: unknown,
  runner: CommandRunner,
): Promise<{ error?: string; note?: string }> {
  if (JSON.stringify(broughtUp) !== JSON.stringify(WINDOWS_TUNNEL_MARK)) return {};
  // Gone already (WireGuard for Windows uninstalled, the service removed): nothing to take down.
  const service = await runner(["sc", "query", TUNNEL_SERVICE]).catch(() => ({
    exitCode: 1,
    stdout: "",
    stderr: "",
  }));
  if (service.exitCode !== 0) return { note: `the ${TUNNEL_SERVICE} service is not there any more` };
  const wireguard = win32.join(windowsFolders(paths.dir).wireguardFolder, "wireguard.exe");
  const result = await runner([wireguard, "/uninstalltunnelservice", TUNNEL_NAME]).catch((error: Error) => ({
    exitCode: 127,
    stdout: "",
    stderr: error.message,
  }));
  return result.exitCode === 0
    ? {}
    : {
        error: `wireguard /uninstalltunnelservice ${TUNNEL_NAME} failed: ${(result.stderr || result.stdout).trim()}`,
      };
}
