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
import {
  emptyJournal,
  type Journal,
  type RegistryJournalEntry,
  readJournal,
  registryJournalEntry,
  writeJournal,
} from "../enforce/journal";
import type { MachineState, RegistryChange, SettingPlan } from "../enforce/plan";
import { pathUnderRoot, readFileState, textOf } from "../enforce/safe-files";
import { POLICY_SETTINGS, TUNNEL_SETTING } from "../enforce/settings";
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
  DEVICE_INSTALL_RESTRICTIONS,
  REMOVABLE_DISKS_POLICY,
  TUNNEL_NAME,
  TUNNEL_SERVICE,
  USBSTOR_SERVICE,
  type WindowsFolders,
  windowsFolders,
} from "./settings";

/** The keys the agent may create, lower case: the policy keys it writes and their parents below Windows'. */
const CREATABLE_KEYS = new Set(
  [
    REMOVABLE_DISKS_POLICY,
    win32.dirname(REMOVABLE_DISKS_POLICY),
    DEVICE_INSTALL_RESTRICTIONS,
    win32.dirname(DEVICE_INSTALL_RESTRICTIONS),
    ALLOWED_DEVICE_IDS,
    ALLOWED_DEVICE_CLASSES,
    // Their parents below HKLM\SOFTWARE\Policies, which a machine without any policy may lack (Wine does).
    "HKLM\\SOFTWARE\\Policies\\Microsoft\\Windows",
    "HKLM\\SOFTWARE\\Policies\\Microsoft",
  ].map((key) => key.toLowerCase()),
);

/** Whether the agent ever writes this value (the list keys' values are numbered). */
function isManagedValue(key: string, name: string): boolean {
  const lower = key.toLowerCase();
  if (lower === ALLOWED_DEVICE_IDS.toLowerCase() || lower === ALLOWED_DEVICE_CLASSES.toLowerCase())
    return /^\d+$/.test(name);
  return managedRegistryValues(emptyJournal()).some(
    (value) => value.key.toLowerCase() === lower && value.name.toLowerCase() === name.toLowerCase(),
  );
}

/**
 * Refuses a journal that names anything the agent never changes: the state folder is SYSTEM's and
 * Administrators', but one planted before enrollment (a folder a user made in ProgramData first) must not
 * turn an undo, run as SYSTEM, into writing any value or file its author chose.
 */
export function checkWindowsJournal(journal: Journal, folders: WindowsFolders): void {
  const files = new Set([folders.hosts, folders.wireguard]);
  const foreign = [
    ...journal.files.filter((entry) => !files.has(entry.path)).map((entry) => entry.path),
    ...(journal.registry ?? [])
      .filter(
        (entry) =>
          !isManagedValue(entry.key, entry.name) ||
          entry.created_keys.some((key) => !CREATABLE_KEYS.has(key.toLowerCase())),
      )
      .map((entry) => `${entry.key}\\${entry.name}`),
  ];
  if (foreign.length > 0)
    throw new Error(
      `the enforcement journal names what the agent never changes (${foreign.join(", ")}): it is not the agent's, and nothing is done from it`,
    );
}

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
  checkWindowsJournal(journal, folders);
  const registry = new Map<string, RegistryValue | null>();
  const keys = new Map<string, Awaited<ReturnType<typeof readRegistryKey>>>();
  const unreadable = new Map<string, string>();
  // A key that cannot be read fails the settings that write there, not the whole pass.
  const keyOf = async (key: string) => {
    if (!keys.has(key) && !unreadable.has(key.toLowerCase())) {
      try {
        keys.set(key, await readRegistryKey(run, key));
      } catch (error) {
        unreadable.set(key.toLowerCase(), (error as Error).message);
      }
    }
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
    unreadable,
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
  const entry = registryJournalEntry(journal, change.key, change.name);
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
  let machine: WindowsMachineState;
  try {
    machine = await readWindowsMachineState(folders, request.stateDir, run, request.broughtUp);
  } catch (error) {
    // Nothing can be planned (a journal that is not the agent's): every setting fails, saying why.
    const detail = (error as Error).message;
    const settings: SettingPlan["setting"][] = [...POLICY_SETTINGS, TUNNEL_SETTING];
    const plan: SettingPlan[] = settings.map((setting) => ({
      setting,
      outcome: "failed" as const,
      detail,
      changes: [],
      tunnel: [],
    }));
    return {
      plan,
      text: formatPlan(plan),
      results: plan.map(({ setting }) => ({ setting, outcome: "failed", detail })),
      broughtUp: request.broughtUp,
    };
  }
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
  // The kill switch is the tunnel service's: a tunnel that failed leaves it not in effect.
  const tunnel = results.find((result) => result.setting === "tunnel");
  const alwaysOn = results.find((result) => result.setting === "network.vpn_always_on");
  if (tunnel?.outcome === "failed" && alwaysOn?.outcome === "enforced") {
    alwaysOn.outcome = "failed";
    alwaysOn.detail = `not in effect: the tunnel failed (${tunnel.detail})`;
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
  try {
    checkWindowsJournal(readJournal(stateDir), folders);
  } catch (error) {
    return { restored: [], failed: [{ path: "the enforcement journal", error: (error as Error).message }] };
  }
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
