/**
 * One enforcement pass on a Mac, as enforce/enforce.ts does on Linux: read the machine (the hosts file,
 * the tunnel's file under Homebrew's prefix, the restrictions profile and whether it is installed), plan,
 * then apply with the same undo journal; then what Linux has no need for: the resolver's cache flushed
 * after the hosts file changed, the restrictions profile opened for the person at the Mac to approve (or
 * removed when the policy no longer asks for it).
 */
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import {
  applyChange,
  type CommandRunner,
  programRunnerOf,
  runCommand,
  type SettingResult,
  type UndoResult,
  undoAll,
} from "../enforce/apply";
import type { EnforceRequest, EnforceResult } from "../enforce/enforce";
import { formatPlan } from "../enforce/format-plan";
import { readJournal } from "../enforce/journal";
import type { MachineState } from "../enforce/plan";
import { pathUnderRoot, readFileState, textOf } from "../enforce/safe-files";
import type { InterfaceIdentity } from "../enforce/tunnel-interface";
import { firstLine, type ProgramRunner } from "../facts/fact";
import { readIfPresent, type StatePaths, writeFileAtomic } from "../identity/state-folder";
import { readRuntimeStatus } from "../run/runtime-status";
import { type MacosMachineState, type MacosSettingPlan, planMacosEnforcement } from "./plan";
import { readProfileState } from "./profile";
import {
  HOMEBREW_PREFIXES,
  MACOS_FILES,
  PROFILE_IDENTIFIER,
  PROGRAMS,
  TUNNEL_NAME,
  TUNNEL_NAME_FILE,
  wireguardConfPath,
} from "./settings";
import { readTunnelName, WIREGUARD_RUN } from "./tunnel";

/** STATE/profile-opened.json: when the restrictions profile was last opened for approval. */
const PROFILE_OPENED = "profile-opened.json";

/** How long a profile left unapproved waits before it is opened for the person again. */
export const PROFILE_REMINDER_MS = 24 * 60 * 60 * 1000;

/** The Homebrew prefix (under ROOT) whose bin/ has wg-quick, or null. */
export function homebrewPrefix(root: string): string | null {
  return HOMEBREW_PREFIXES.find((prefix) => existsSync(join(root, prefix, "bin/wg-quick"))) ?? null;
}

/**
 * The utun wg-quick made for the tunnel, or null when it is not up: its name file in `runFolder` judged
 * as wg-quick judges it (tunnel.ts), so that a name file left behind by a wireguard-go that died is a
 * tunnel to bring up again, not one that is up.
 */
export async function tunnelUtun(runFolder = WIREGUARD_RUN): Promise<string | null> {
  const found = await readTunnelName(runFolder);
  return found.state === "up" ? found.utun : null;
}

/** What status.json records after `wg-quick up`: the utun it made (its number, and its name). */
export function macosTunnelMark(utun: string): InterfaceIdentity {
  return { ifindex: Number(utun.slice("utun".length)), boot_id: utun };
}

/** Whether the tunnel is down, the one this enrollment brought up, or another of its name. */
export async function macosTunnelOwnership(
  broughtUp: InterfaceIdentity | null,
  runFolder = WIREGUARD_RUN,
): Promise<MachineState["tunnel"]> {
  const utun = await tunnelUtun(runFolder);
  if (utun === null) return "absent";
  return broughtUp !== null && broughtUp.boot_id === utun ? "ours" : "other";
}

/** wg-quick from `prefix`, with that prefix first on PATH: its `#!/usr/bin/env bash` needs Homebrew's bash 4+. */
export function wgQuickCommand(prefix: string, action: "up" | "down", conf: string): string[] {
  return [
    PROGRAMS.env,
    `PATH=${prefix}/bin:${prefix}/sbin:/usr/bin:/bin:/usr/sbin:/sbin`,
    `${prefix}/bin/wg-quick`,
    action,
    conf,
  ];
}

function isReminderDue(stateDir: string, now: Date): boolean {
  const text = readIfPresent(join(stateDir, PROFILE_OPENED));
  if (text === null) return true;
  const openedAt = Date.parse((JSON.parse(text) as { opened_at?: string }).opened_at ?? "");
  return Number.isNaN(openedAt) || now.getTime() - openedAt >= PROFILE_REMINDER_MS;
}

/** Reads what the macOS planner needs. */
export async function readMacosMachineState(
  root: string,
  stateDir: string,
  run: ProgramRunner,
  tunnel: { runFolder?: string; broughtUp: InterfaceIdentity | null; now?: Date },
): Promise<MacosMachineState> {
  const journal = readJournal(stateDir);
  const paths = new Set<string>([
    MACOS_FILES.hosts,
    MACOS_FILES.profile,
    ...HOMEBREW_PREFIXES.map(wireguardConfPath),
    ...journal.files.map((entry) => entry.path),
  ]);
  const files: MachineState["files"] = {};
  for (const path of paths) {
    try {
      const found = readFileState(pathUnderRoot(root, path));
      files[path] = found === null ? null : { text: textOf(found.bytes), mode: found.mode };
    } catch (error) {
      files[path] = { error: (error as Error).message };
    }
  }
  return {
    files,
    journal,
    tunnel: await macosTunnelOwnership(tunnel.broughtUp, tunnel.runFolder),
    usbguardInstalled: false,
    homebrewPrefix: homebrewPrefix(root),
    profile: await readProfileState(run),
    isReminderDue: isReminderDue(stateDir, tunnel.now ?? new Date()),
  };
}

/** The tunnel's commands, as `agent plan` prints them. */
function macosTunnelCommands(
  root: string,
  prefix: string | null,
): Record<"up" | "down" | "syncconf", string> {
  const found = prefix ?? HOMEBREW_PREFIXES[0];
  const conf = pathUnderRoot(root, wireguardConfPath(found));
  return {
    up: `${found}/bin/wg-quick up ${conf}`,
    down: `${found}/bin/wg-quick down ${conf}`,
    syncconf: `${found}/bin/wg-quick down ${conf} && ${found}/bin/wg-quick up ${conf}`,
  };
}

async function runOrThrow(runner: CommandRunner, argv: string[]): Promise<void> {
  const result = await runner(argv);
  if (result.exitCode !== 0)
    throw new Error(
      `${argv.join(" ")} failed (exit ${result.exitCode}): ${(result.stderr || result.stdout).trim()}`,
    );
}

/** Runs a command, answering its failure in words (null when it succeeded). */
async function failureOf(runner: CommandRunner, argv: string[]): Promise<string | null> {
  try {
    const result = await runner(argv);
    if (result.exitCode === 0) return null;
    return `${argv.join(" ")}: exit ${result.exitCode}${firstLine(result.stderr || result.stdout) ? ` (${firstLine(result.stderr || result.stdout)})` : ""}`;
  } catch (error) {
    return `${argv.join(" ")}: ${(error as Error).message}`;
  }
}

/** Flushes the resolver's cache after the hosts file changed: a failure is said, never fatal. */
async function flushResolverCache(runner: CommandRunner): Promise<string | null> {
  const failures = [
    await failureOf(runner, [PROGRAMS.dscacheutil, "-flushcache"]),
    await failureOf(runner, [PROGRAMS.killall, "-HUP", "mDNSResponder"]),
  ].filter((failure): failure is string => failure !== null);
  return failures.length === 0
    ? null
    : `the resolver's cache could not be flushed (${failures.join("; ")}): names already looked up resolve until their time to live runs out`;
}

/**
 * Opens the restrictions profile for the person at the Mac (System Settings then offers it under
 * Privacy & Security > Profiles): `open` run in the console user's session, as that user. Returns what
 * to add to the setting's detail.
 */
async function openProfileForUser(root: string, stateDir: string, runner: CommandRunner): Promise<string> {
  const path = pathUnderRoot(root, MACOS_FILES.profile);
  if (root !== "/") return `ROOT is not /: open ${path} on the Mac`;
  const seat = await runner([PROGRAMS.stat, "-f", "%Su:%u", "/dev/console"]).catch(() => null);
  const [user, uid] = (seat?.exitCode === 0 ? seat.stdout.trim() : "").split(":");
  if (!user || !uid || user === "root" || !/^\d+$/.test(uid))
    return `no one is logged in at the screen: it is opened when someone is, or open ${path} yourself`;
  const failure = await failureOf(runner, [
    PROGRAMS.launchctl,
    "asuser",
    uid,
    PROGRAMS.sudo,
    "-u",
    user,
    PROGRAMS.open,
    path,
  ]);
  if (failure !== null) return `it could not be opened for ${user} (${failure}): open ${path} yourself`;
  writeFileAtomic(
    join(stateDir, PROFILE_OPENED),
    `${JSON.stringify({ opened_at: new Date().toISOString(), user })}\n`,
  );
  return `opened for ${user}, who approves it in System Settings > Privacy & Security > Profiles`;
}

/** Removes the restrictions profile (`profiles remove -identifier`); the failure in words, or null. */
async function removeProfile(runner: CommandRunner): Promise<string | null> {
  const failure = await failureOf(runner, [PROGRAMS.profiles, "remove", "-identifier", PROFILE_IDENTIFIER]);
  return failure === null
    ? null
    : `the profile ${PROFILE_IDENTIFIER} could not be removed (${failure}): remove it in System Settings > Privacy & Security > Profiles`;
}

/** Enforces the policy on a Mac (or, for a dry run, only plans it), as `enforcePolicy` does on Linux. */
export async function enforceMacosPolicy(request: EnforceRequest): Promise<EnforceResult> {
  const runner = request.runner ?? runCommand;
  const run = programRunnerOf(runner);
  const { root, stateDir } = request;
  const machine = await readMacosMachineState(root, stateDir, run, {
    ...(request.interfaces ? { runFolder: request.interfaces } : {}),
    broughtUp: request.broughtUp,
  });
  const plan: MacosSettingPlan[] = planMacosEnforcement({
    policy: request.policy,
    vpn: request.vpn,
    facts: request.facts,
    options: request.options,
    machine,
    stateDir,
  });
  const text = formatPlan(plan, macosTunnelCommands(root, machine.homebrewPrefix));
  if (request.dryRun)
    return {
      plan,
      text,
      results: plan.map(({ setting, outcome, detail }) => ({ setting, outcome, detail })),
      broughtUp: request.broughtUp,
    };
  if (plan.some((entry) => entry.changes.length > 0)) mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const journal = readJournal(stateDir);
  const prefix = machine.homebrewPrefix ?? HOMEBREW_PREFIXES[0];
  const conf = pathUnderRoot(root, wireguardConfPath(prefix));
  let broughtUp = request.broughtUp;
  const results: SettingResult[] = [];
  for (const entry of plan) {
    const { setting, outcome } = entry;
    let { detail } = entry;
    if (outcome === "failed") {
      results.push({ setting, outcome, detail });
      continue;
    }
    try {
      if (entry.tunnel.includes("down")) {
        await runOrThrow(runner, wgQuickCommand(prefix, "down", conf));
        broughtUp = null;
      }
      for (const change of entry.changes) applyChange(root, stateDir, journal, change);
      if (entry.tunnel.includes("up")) {
        await runOrThrow(runner, wgQuickCommand(prefix, "up", conf));
        const utun = await tunnelUtun(request.interfaces);
        broughtUp = utun === null ? null : macosTunnelMark(utun);
      }
      if (setting === "network.blocked_domains" && entry.changes.length > 0) {
        const flushFailure = await flushResolverCache(runner);
        if (flushFailure !== null) detail += `; ${flushFailure}`;
      }
      if (entry.profile === "open") detail += ` (${await openProfileForUser(root, stateDir, runner)})`;
      if (entry.profile === "remove") {
        const failure = await removeProfile(runner);
        if (failure !== null) throw new Error(failure);
      }
      results.push({ setting, outcome, detail });
    } catch (error) {
      results.push({ setting, outcome: "failed", detail: (error as Error).message });
    }
  }
  return { plan, text, results, broughtUp };
}

/**
 * Undoes every enforcement on a Mac (unenroll, wipe): the restrictions profile removed when it is
 * installed (whatever the journal says: a run of unenroll after a failed removal tries again), then
 * every file of the journal as on Linux.
 */
export async function undoMacos(root: string, stateDir: string, runner: CommandRunner): Promise<UndoResult> {
  const failed: UndoResult["failed"] = [];
  const profile = await readProfileState(programRunnerOf(runner));
  if ("installed" in profile && profile.installed) {
    const failure = await removeProfile(runner);
    if (failure !== null)
      failed.push({ path: `the configuration profile ${PROFILE_IDENTIFIER}`, error: failure });
  }
  const undone = undoAll(root, stateDir);
  return { restored: undone.restored, failed: [...failed, ...undone.failed] };
}

/** Takes the tunnel down (wg-quick down) at unenroll and wipe, when this enrollment brought it up. */
export async function takeMacosTunnelDown(
  root: string,
  paths: StatePaths,
  runner: CommandRunner,
): Promise<{ error?: string; note?: string }> {
  const ownership = await macosTunnelOwnership(readRuntimeStatus(paths.status).tunnel_interface);
  if (ownership === "other")
    return {
      note: `a ${TUNNEL_NAME} tunnel is up (${TUNNEL_NAME_FILE}) that this agent did not bring up: left as it is`,
    };
  const prefix = homebrewPrefix(root);
  if (ownership === "absent" || prefix === null) return {};
  const conf = pathUnderRoot(root, wireguardConfPath(prefix));
  if (!existsSync(conf)) return {};
  const failure = await failureOf(runner, wgQuickCommand(prefix, "down", conf));
  return failure === null ? {} : { error: `wg-quick down failed: ${failure}` };
}
