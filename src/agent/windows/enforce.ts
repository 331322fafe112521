/**
 * One enforcement pass on Windows, as enforce/enforce.ts does on Linux: read the machine (the registry
 * values the agent manages, the hosts file, the tunnel's file and service), plan, then apply: each
 * registry value's earlier data and type (or its absence) is journalled before it changes, as a file's
 * bytes are, so that a policy change, an unenroll or a wipe gives back exactly what was there.
 */
import { existsSync, mkdirSync } from "node:fs";
import { win32 } from "node:path";
import {
  applyChange,
  type CommandRunner,
  programRunnerOf,
  runCommand,
  type SettingResult,
  undoAll,
} from "../enforce/apply";
import type { EnforceRequest, EnforceResult } from "../enforce/enforce";
import { formatPlan } from "../enforce/format-plan";
import { type Journal, type RegistryJournalEntry, readJournal, writeJournal } from "../enforce/journal";
import type { MachineState, RegistryChange, SettingPlan } from "../enforce/plan";
import { pathUnderRoot, readFileState, textOf } from "../enforce/safe-files";
import type { InterfaceIdentity } from "../enforce/tunnel-interface";
import type { ProgramRunner } from "../facts/fact";
import { managedRegistryValues, planWindowsEnforcement, registryId, type WindowsMachineState } from "./plan";
import {
  deleteEmptyKey,
  deleteRegistryValue,
  type RegistryValue,
  readRegistryKey,
  registryValue,
  writeRegistryValue,
} from "./registry";
import {
  ALLOWED_DEVICE_CLASSES,
  ALLOWED_DEVICE_IDS,
  TUNNEL_NAME,
  TUNNEL_SERVICE,
  USBSTOR_SERVICE,
  type WindowsFolders,
  windowsFolders,
} from "./settings";

/** What status.json records after the agent installed the tunnel's service (Windows has no ifindex to keep). */
export const WINDOWS_TUNNEL_MARK: InterfaceIdentity = { ifindex: 0, boot_id: TUNNEL_SERVICE };

/** Whether the tunnel's service exists: `sc query` exits 1060 (ERROR_SERVICE_DOES_NOT_EXIST) when not. */
async function tunnelServiceExists(run: ProgramRunner): Promise<boolean> {
  const result = await run(["sc", "query", TUNNEL_SERVICE]);
  return result.code === 0;
}

/** Reads what the Windows planner needs. */
export async function readWindowsMachineState(
  folders: WindowsFolders,
  stateDir: string,
  run: ProgramRunner,
  broughtUp: InterfaceIdentity | null,
): Promise<WindowsMachineState> {
  const files: MachineState["files"] = {};
  for (const path of [folders.hosts, folders.wireguard]) {
    try {
      const found = readFileState(pathUnderRoot(folders.root, path));
      files[path] = found === null ? null : { text: textOf(found.bytes), mode: found.mode };
    } catch (error) {
      files[path] = { error: (error as Error).message };
    }
  }
  const journal = readJournal(stateDir);
  const registry = new Map<string, RegistryValue | null>();
  const keys = new Map<string, Awaited<ReturnType<typeof readRegistryKey>>>();
  const keyOf = async (key: string) => {
    if (!keys.has(key)) keys.set(key, await readRegistryKey(run, key));
    return keys.get(key) ?? null;
  };
  for (const { key, name } of managedRegistryValues(journal))
    registry.set(registryId(key, name), registryValue(await keyOf(key), name));
  // The list keys are read whole: values the agent did not write there are its to overwrite and restore.
  for (const key of [ALLOWED_DEVICE_IDS, ALLOWED_DEVICE_CLASSES])
    for (const [name, value] of (await keyOf(key))?.values ?? []) registry.set(registryId(key, name), value);
  const serviceExists = await tunnelServiceExists(run);
  return {
    files,
    journal,
    tunnel: !serviceExists ? "absent" : broughtUp !== null ? "ours" : "other",
    usbguardInstalled: false,
    registry,
    usbstorPresent: (await keyOf(USBSTOR_SERVICE)) !== null,
    wireguardInstalled: existsSync(win32.join(folders.wireguardFolder, "wireguard.exe")),
  };
}

/** The parent keys of `key` that do not exist yet, outermost first (`HKLM\SOFTWARE` always does). */
async function missingKeys(run: ProgramRunner, key: string): Promise<string[]> {
  const missing: string[] = [];
  for (let current = key; current.split("\\").length > 2; current = win32.dirname(current)) {
    if ((await readRegistryKey(run, current)) !== null) break;
    missing.unshift(current);
  }
  return missing;
}

function journalEntryOf(journal: Journal, key: string, name: string): RegistryJournalEntry | undefined {
  return (journal.registry ?? []).find(
    (entry) =>
      entry.key.toLowerCase() === key.toLowerCase() && entry.name.toLowerCase() === name.toLowerCase(),
  );
}

/** Puts a value back as the journal found it (or deletes it), then the keys the agent created when empty. */
async function restoreValue(
  run: ProgramRunner,
  stateDir: string,
  journal: Journal,
  entry: RegistryJournalEntry,
) {
  if (entry.original === null) await deleteRegistryValue(run, entry.key, entry.name);
  else await writeRegistryValue(run, entry.key, entry.name, entry.original);
  const others = (journal.registry ?? []).filter((other) => other !== entry);
  const created = [...entry.created_keys];
  while (created.length > 0) {
    const key = created.at(-1) as string;
    // Another value the agent still keeps there holds the key: it takes over deleting it (and those
    // above it), once it goes too.
    const holder = others.find((other) =>
      `${other.key.toLowerCase()}\\`.startsWith(`${key.toLowerCase()}\\`),
    );
    if (holder !== undefined) {
      holder.created_keys = [...new Set([...created, ...holder.created_keys])];
      break;
    }
    // A key that holds something else (an administrator's value) stays.
    if (!(await deleteEmptyKey(run, key))) break;
    created.pop();
  }
  journal.registry = others;
  writeJournal(stateDir, journal);
}

/** Applies one registry change, journalling the earlier value first (a crash after it can still be undone). */
async function applyRegistryChange(
  run: ProgramRunner,
  stateDir: string,
  journal: Journal,
  change: RegistryChange,
) {
  const entry = journalEntryOf(journal, change.key, change.name);
  if (change.release) {
    if (entry !== undefined) await restoreValue(run, stateDir, journal, entry);
    return;
  }
  if (entry === undefined) {
    const created = await missingKeys(run, change.key);
    journal.registry = [
      ...(journal.registry ?? []),
      { key: change.key, name: change.name, original: change.before, created_keys: created },
    ];
    writeJournal(stateDir, journal);
  }
  if (change.after !== null) await writeRegistryValue(run, change.key, change.name, change.after);
}

/** The tunnel service's commands, as `agent plan` prints them. */
export function windowsTunnelCommands(
  folders: WindowsFolders,
): Record<SettingPlan["tunnel"][number], string> {
  const wireguard = win32.join(folders.wireguardFolder, "wireguard.exe");
  const conf = pathUnderRoot(folders.root, folders.wireguard);
  return {
    down: `"${wireguard}" /uninstalltunnelservice ${TUNNEL_NAME}`,
    up: `"${wireguard}" /installtunnelservice "${conf}"`,
    syncconf: `"${wireguard}" /installtunnelservice "${conf}"`,
  };
}

async function runOrThrow(runner: CommandRunner, argv: string[]): Promise<void> {
  const result = await runner(argv);
  if (result.exitCode !== 0)
    throw new Error(
      `${argv.join(" ")} failed (exit ${result.exitCode}): ${(result.stderr || result.stdout).trim()}`,
    );
}

/** Enforces the policy on Windows (or, for a dry run, only plans it), as `enforcePolicy` does on Linux. */
export async function enforceWindowsPolicy(request: EnforceRequest): Promise<EnforceResult> {
  const runner = request.runner ?? runCommand;
  const run = programRunnerOf(runner);
  const folders = windowsFolders(request.stateDir);
  const machine = await readWindowsMachineState(folders, request.stateDir, run, request.broughtUp);
  const plan = planWindowsEnforcement({
    policy: request.policy,
    vpn: request.vpn,
    facts: request.facts,
    options: request.options,
    machine,
    folders,
  });
  const text = formatPlan(plan, windowsTunnelCommands(folders));
  if (request.dryRun)
    return {
      plan,
      text,
      results: plan.map(({ setting, outcome, detail }) => ({ setting, outcome, detail })),
      broughtUp: request.broughtUp,
    };
  if (plan.some((entry) => entry.changes.length > 0 || (entry.registry ?? []).length > 0))
    mkdirSync(request.stateDir, { recursive: true });
  const journal = readJournal(request.stateDir);
  const wireguard = win32.join(folders.wireguardFolder, "wireguard.exe");
  const conf = pathUnderRoot(folders.root, folders.wireguard);
  let broughtUp = request.broughtUp;
  const results: SettingResult[] = [];
  for (const entry of plan) {
    const { setting, outcome, detail } = entry;
    if (outcome === "failed") {
      results.push({ setting, outcome, detail });
      continue;
    }
    try {
      if (entry.tunnel.includes("down")) {
        await runOrThrow(runner, [wireguard, "/uninstalltunnelservice", TUNNEL_NAME]);
        broughtUp = null;
      }
      for (const change of entry.changes) applyChange(folders.root, request.stateDir, journal, change);
      for (const change of entry.registry ?? [])
        await applyRegistryChange(run, request.stateDir, journal, change);
      if (entry.tunnel.includes("up")) {
        await runOrThrow(runner, [wireguard, "/installtunnelservice", conf]);
        broughtUp = WINDOWS_TUNNEL_MARK;
      }
      results.push({ setting, outcome, detail });
    } catch (error) {
      results.push({ setting, outcome: "failed", detail: (error as Error).message });
    }
  }
  return { plan, text, results, broughtUp };
}

/**
 * Undoes every change of the journal on Windows: the files (the hosts section, the tunnel's file) as on
 * Linux, then each registry value, newest first, forgotten as soon as it is restored.
 */
export async function undoWindows(
  stateDir: string,
  runner: CommandRunner = runCommand,
): Promise<{ restored: string[]; failed: { path: string; error: string }[] }> {
  const folders = windowsFolders(stateDir);
  const result = undoAll(folders.root, stateDir);
  const run = programRunnerOf(runner);
  const journal = readJournal(stateDir);
  for (const entry of [...(journal.registry ?? [])].reverse()) {
    const label = `${entry.key}\\${entry.name}`;
    try {
      await restoreValue(run, stateDir, journal, entry);
      result.restored.push(label);
    } catch (error) {
      result.failed.push({ path: label, error: (error as Error).message });
    }
  }
  return result;
}
