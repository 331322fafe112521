/**
 * The enforcement planner: from the policy, the server's VPN settings, the facts and what the machine
 * holds now, each setting's outcome and the exact file changes it implies. It reads and writes nothing;
 * `apply.ts` carries a plan out, `format-plan.ts` prints it (a dry run is a plan printed).
 */

import type { PolicyData } from "../../domain/policies/policy-document";
import { type Journal, type JournalEntry, journalEntry, originalOf } from "./journal";
import { LINUX_SUPPORT } from "./platform-support";
import {
  renderHostsSection,
  sortBlockedDomains,
  withHostsSection,
  withoutHostsSection,
} from "./render-hosts";
import { renderModprobeConf } from "./render-modprobe";
import { renderUsbguardRules, unmappableUsbClasses } from "./render-usbguard";
import {
  changesOnlyLiveFields,
  renderWireGuardConf,
  type VpnSettings,
  vpnSettingsProblem,
} from "./render-wireguard";
import { textOf } from "./safe-files";
import {
  MANAGED_FILES,
  POLICY_SETTINGS,
  type PolicySettingName,
  TUNNEL_INTERFACE,
  TUNNEL_SETTING,
} from "./settings";
import { OTHER_TUNNEL_INTERFACE } from "./tunnel-interface";

/**
 * What became of a setting. `pending_approval` (macOS): the agent did its part, and the setting takes
 * effect once the person at the machine approves it (a configuration profile in System Settings).
 */
export type EnforcementOutcome = "enforced" | "reported" | "unsupported" | "failed" | "pending_approval";

/** The facts the planner compares reported settings with (as the check-in sends them; absent: unknown). */
export interface EnforcementFacts {
  disk_encrypted?: boolean;
  vpn_connected?: boolean;
}

/** A managed file as found: its text (null when it is not UTF-8 text) and permission bits. */
export interface CurrentFile {
  text: string | null;
  mode: number;
}

/** What the machine and the state folder hold now (read by `readMachineState`). */
export interface MachineState {
  /** Each managed file: null when absent, `{ error }` when it could not be read (a symbolic link...). */
  files: Record<string, CurrentFile | null | { error: string }>;
  journal: Journal;
  /**
   * The tunnel's interface in the running kernel: absent, the one this enrollment brought up, or
   * another of the same name (an administrator's, another enrollment's), which the agent leaves alone.
   */
  tunnel: "absent" | "ours" | "other";
  /** Whether usbguard is installed (its daemon is what reads the rules). */
  usbguardInstalled: boolean;
}

export interface PlanOptions {
  /** `--no-tunnel`: write the tunnel's file but never bring the interface up or down. */
  noTunnel: boolean;
  /** The device's WireGuard private key (the state folder's wg.key); null when there is none. */
  wireGuardPrivateKey: string | null;
}

export interface PlanInput {
  policy: PolicyData;
  vpn: VpnSettings | null;
  facts: EnforcementFacts;
  machine: MachineState;
  options: PlanOptions;
}

/** One file change: `path` under ROOT, its text before and after (null: no file), the mode after. */
export interface FileChange {
  path: string;
  before: string | null;
  after: string | null;
  mode: number;
  /** whole: the agent owns the whole file; section: only its `# BEGIN bulwark` section. */
  kind: JournalEntry["kind"];
  /** Put back the journal's earlier file byte for byte (content and mode, or its absence). */
  restoreOriginal: boolean;
  /** The agent is done with the file: its journal entry and the directories it created go. */
  release: boolean;
}

/** What is done to the tunnel's interface: `down` before the file changes, `up` or `syncconf` after. */
export type TunnelAction = "down" | "up" | "syncconf";

/**
 * One registry value change (Windows): the value before and after (null: no value); `release` gives back
 * the journal's earlier value and forgets it.
 */
export interface RegistryChange {
  key: string;
  name: string;
  before: { type: string; data: string } | null;
  after: { type: string; data: string } | null;
  release: boolean;
}

export interface SettingPlan {
  setting: PolicySettingName | typeof TUNNEL_SETTING;
  outcome: EnforcementOutcome;
  detail: string;
  changes: FileChange[];
  tunnel: TunnelAction[];
  /** Windows: the registry values it changes. */
  registry?: RegistryChange[];
}

export type Planned = Omit<SettingPlan, "setting">;

export function planned(outcome: EnforcementOutcome, detail: string, changes: FileChange[] = []): Planned {
  return { outcome, detail, changes, tunnel: [] };
}

const NOT_UTF8 = "(earlier content: not UTF-8 text)";

/** The machine's current file at `path`, or throws its read error (the setting then fails). */
export function currentFile(machine: MachineState, path: string): CurrentFile | null {
  const found = machine.files[path] ?? null;
  if (found !== null && "error" in found) throw new Error(found.error);
  return found;
}

/**
 * The change that makes the agent's whole file at `path` hold `desired`, or, with `desired` null, that
 * gives back what the journal says was there before the agent wrote it.
 */
export function wholeFileChanges(
  input: PlanInput,
  path: string,
  desired: string | null,
  mode: number,
): FileChange[] {
  const current = currentFile(input.machine, path);
  const before = current === null ? null : (current.text ?? NOT_UTF8);
  if (desired !== null) {
    if (current !== null && current.text === desired && current.mode === mode) return [];
    const change = { path, before, after: desired, mode, kind: "whole" as const };
    return [{ ...change, restoreOriginal: false, release: false }];
  }
  const entry = journalEntry(input.machine.journal, path);
  if (entry === undefined) return [];
  const original = originalOf(entry);
  return [
    {
      path,
      before,
      after: original === null ? null : (textOf(original.bytes) ?? NOT_UTF8),
      mode: original?.mode ?? current?.mode ?? 0o644,
      kind: entry.kind,
      restoreOriginal: true,
      release: true,
    },
  ];
}

/** A setting Linux cannot enforce: unsupported, saying why in the platform table's words. */
function unsupported(setting: PolicySettingName): (input: PlanInput) => Planned {
  return () => planned("unsupported", LINUX_SUPPORT[setting].how);
}

export function describeFact(
  name: keyof EnforcementFacts,
  value: boolean | undefined,
  meaning: string,
): string {
  return value === undefined ? `${name} unknown: the agent could not tell ${meaning}` : `${name}=${value}`;
}

function planEncryption({ policy, facts }: PlanInput): Planned {
  const fact = describeFact("disk_encrypted", facts.disk_encrypted, "whether / is on an encrypted device");
  if (!policy.storage.encryption_required) return planned("reported", `not required (${fact})`);
  if (facts.disk_encrypted === false)
    return planned(
      "reported",
      `required, but ${fact}: / is on no dm-crypt device, and a running system cannot encrypt itself`,
    );
  return planned("reported", `required; ${fact}`);
}

function planVpnRequired({ policy, facts }: PlanInput): Planned {
  const fact = describeFact(
    "vpn_connected",
    facts.vpn_connected,
    `whether the ${TUNNEL_INTERFACE} tunnel is up`,
  );
  if (!policy.network.vpn_required) return planned("reported", `not required (${fact})`);
  if (facts.vpn_connected === false)
    return planned(
      "reported",
      `required, but ${fact}: no handshake on ${TUNNEL_INTERFACE} in the last 180 s`,
    );
  return planned("reported", `required; ${fact}`);
}

/**
 * A platform's report of the settings whose outcome is only read from the facts (`planners`, by
 * setting): a setting's outcome and detail from the facts as they are now (after enforcement brought
 * the tunnel up, say), or null for a setting whose outcome does not come from the facts.
 */
export function reportFromFactsWith<Input>(
  planners: Partial<
    Record<PolicySettingName, (input: Input) => { outcome: EnforcementOutcome; detail: string }>
  >,
) {
  return (
    setting: string,
    input: { policy: PolicyData; facts: EnforcementFacts },
  ): { outcome: EnforcementOutcome; detail: string } | null => {
    const plan = Object.hasOwn(planners, setting) ? planners[setting as PolicySettingName] : undefined;
    if (!plan) return null;
    const { outcome, detail } = plan(input as Input);
    return { outcome, detail };
  };
}

/** Linux's: disk encryption and the VPN are read from the facts, planned again after enforcement. */
export const reportFromFacts = reportFromFactsWith<PlanInput>({
  "storage.encryption_required": planEncryption,
  "network.vpn_required": planVpnRequired,
});

function planExternalStorage(input: PlanInput): Planned {
  const path = MANAGED_FILES.modprobe;
  if (input.policy.storage.external_storage_allowed)
    return planned(
      "enforced",
      "external storage allowed: no modprobe rule",
      wholeFileChanges(input, path, null, 0),
    );
  return planned(
    "enforced",
    `${path}: usb-storage and uas cannot be loaded (a driver already loaded stays until it is unloaded or the machine restarts)`,
    wholeFileChanges(input, path, renderModprobeConf(), 0o644),
  );
}

/** Whether the usbguard rules are written: USB blocked and not in audit-only mode. */
function isUsbBlocked(policy: PolicyData): boolean {
  return !policy.usb.allowed && !policy.usb.audit_only;
}

function planUsbAllowed(input: PlanInput): Planned {
  const { usb } = input.policy;
  const path = MANAGED_FILES.usbguard;
  if (!isUsbBlocked(input.policy)) {
    const reason = usb.allowed
      ? "every USB device allowed: no usbguard rules"
      : "usb.audit_only: USB devices are not blocked, so no usbguard rules are written";
    return planned(usb.allowed ? "enforced" : "reported", reason, wholeFileChanges(input, path, null, 0));
  }
  const changes = wholeFileChanges(
    input,
    path,
    renderUsbguardRules(usb.whitelist, usb.allowed_classes),
    0o600,
  );
  if (!input.machine.usbguardInstalled)
    return planned(
      "unsupported",
      `usbguard is not installed, so nothing blocks USB devices; ${path} is written for when it is`,
      changes,
    );
  return planned(
    "enforced",
    `${path}: hubs, the whitelist and the allowed classes are allowed, every other device blocked (usbguard reads it when it starts)`,
    changes,
  );
}

/**
 * Why the whitelist and the allowed classes have no effect, or null when they do: USB devices are
 * blocked only when the policy blocks them and usbguard, which reads the rules, is installed.
 */
function usbRulesIneffective({ policy, machine }: PlanInput): string | null {
  if (!isUsbBlocked(policy)) return "no effect while USB devices are not blocked";
  if (!machine.usbguardInstalled)
    return `no effect: usbguard is not installed, so USB devices are not blocked (${MANAGED_FILES.usbguard} is written for when it is)`;
  return null;
}

function planUsbWhitelist(input: PlanInput): Planned {
  const { policy } = input;
  const ineffective = usbRulesIneffective(input);
  if (ineffective !== null) return planned("reported", ineffective);
  const count = policy.usb.whitelist.length;
  return planned(
    "enforced",
    `${count} device${count === 1 ? "" : "s"} allowed by vendor:product in ${MANAGED_FILES.usbguard}`,
  );
}

function planUsbClasses(input: PlanInput): Planned {
  const { policy } = input;
  const ineffective = usbRulesIneffective(input);
  if (ineffective !== null) return planned("reported", ineffective);
  const classes = policy.usb.allowed_classes;
  const unmappable = unmappableUsbClasses(classes);
  const written = classes.filter((name) => !unmappable.includes(name));
  const listed = written.length > 0 ? written.join(", ") : "none";
  const left =
    unmappable.length > 0 ? `; ${unmappable.join(", ")} names no USB class code and is not written` : "";
  return planned(
    "enforced",
    `allowed by interface class in ${MANAGED_FILES.usbguard}: ${listed} (hubs always)${left}; a device is allowed when one of its interfaces has an allowed class`,
  );
}

function planUsbAuditOnly({ policy }: PlanInput): Planned {
  return planned(
    "reported",
    policy.usb.audit_only
      ? "audit only: USB devices are not blocked; usbguard, when installed, logs them"
      : "off: USB devices are blocked as usb.allowed says",
  );
}

function planBlockedDomains(input: PlanInput): Planned {
  return planHostsSection(input, MANAGED_FILES.hosts);
}

/** `network.blocked_domains` as the agent's section of the hosts file at `path` (Linux's or Windows'). */
export function planHostsSection(input: PlanInput, path: string): Planned {
  const { names, wildcards, invalid } = sortBlockedDomains(input.policy.network.blocked_domains);
  const current = currentFile(input.machine, path);
  if (current !== null && current.text === null)
    throw new Error(`${path} is not UTF-8 text; it is left as it is`);
  const text = current?.text ?? null;
  const entry = journalEntry(input.machine.journal, path);
  const notes = [
    wildcards.length > 0 ? `unsupported: ${wildcards.join(", ")} (a hosts file blocks exact names only)` : "",
    invalid.length > 0
      ? `not host names, left out: ${invalid.map((name) => JSON.stringify(name)).join(", ")}`
      : "",
  ].filter(Boolean);
  const changes: FileChange[] = [];
  if (names.length > 0) {
    const after = withHostsSection(text ?? "", renderHostsSection(names));
    if (after !== text) {
      const mode = current?.mode ?? 0o644;
      changes.push({
        path,
        before: text,
        after,
        mode,
        kind: "section",
        restoreOriginal: false,
        release: false,
      });
    }
  } else if (text !== null && current !== null) {
    // The file as the agent found it: null when there was none, undefined when the journal cannot say.
    const original = entry === undefined ? undefined : originalOf(entry);
    const originalText =
      original === undefined || original === null ? original : (textOf(original.bytes) ?? undefined);
    const after = withoutHostsSection(text, originalText);
    const restoreOriginal = originalText !== undefined && after === originalText;
    if (after !== text || entry !== undefined) {
      const mode = restoreOriginal && original ? original.mode : current.mode;
      changes.push({ path, before: text, after, mode, kind: "section", restoreOriginal, release: true });
    }
  }
  if (names.length === 0) {
    const detail = [`no exact names to block: no section in ${path}`, ...notes].join("; ");
    return planned(wildcards.length > 0 || invalid.length > 0 ? "unsupported" : "enforced", detail, changes);
  }
  const detail = [
    `${names.length === 1 ? "1 name resolves" : `${names.length} names resolve`} to 0.0.0.0 and :: through ${path} (programs that use their own DNS resolver, or DNS over HTTPS, are not stopped)`,
    ...notes,
  ].join("; ");
  return planned("enforced", detail, changes);
}

/** The split tunnel is the server's VPN settings' to decide, on every platform: reported. */
export function planSplitTunnel({ policy, vpn }: PlanInput): Planned {
  const routes = vpn === null ? "no VPN settings" : `AllowedIPs ${vpn.allowed_ips.join(", ") || "none"}`;
  return planned(
    "reported",
    `split_tunnel=${policy.network.split_tunnel}: the server's VPN settings decide what goes through the tunnel (${routes})`,
  );
}

const PLANNERS: Record<PolicySettingName, (input: PlanInput) => Planned> = {
  "dlp.clipboard_sharing": unsupported("dlp.clipboard_sharing"),
  "dlp.clipboard_direction": unsupported("dlp.clipboard_direction"),
  "dlp.screenshot_allowed": unsupported("dlp.screenshot_allowed"),
  "dlp.print_allowed": unsupported("dlp.print_allowed"),
  "dlp.sensitive_data_patterns": unsupported("dlp.sensitive_data_patterns"),
  "network.vpn_required": planVpnRequired,
  "network.vpn_always_on": unsupported("network.vpn_always_on"),
  "network.allowed_domains": unsupported("network.allowed_domains"),
  "network.blocked_domains": planBlockedDomains,
  "network.split_tunnel": planSplitTunnel,
  "usb.allowed": planUsbAllowed,
  "usb.whitelist": planUsbWhitelist,
  "usb.allowed_classes": planUsbClasses,
  "usb.audit_only": planUsbAuditOnly,
  "storage.encryption_required": planEncryption,
  "storage.external_storage_allowed": planExternalStorage,
  "storage.cloud_sync_allowed": unsupported("storage.cloud_sync_allowed"),
  "storage.max_file_size_mb": unsupported("storage.max_file_size_mb"),
  "wipe.work_paths": planWorkPaths,
};

/** The work paths change nothing until a wipe: reported, with what a wipe would erase. */
function planWorkPaths(input: PlanInput): Planned {
  const paths = input.policy.wipe?.work_paths ?? [];
  if (paths.length === 0)
    return planned("reported", "the policy names no work paths: a wipe erases no files");
  const inHomes = paths.some((path) => path.startsWith("~/")) ? " (~ is each local user's home)" : "";
  return planned("reported", `a wipe erases ${paths.join(", ")}${inHomes}; nothing is changed before one`);
}

function planTunnel(input: PlanInput): Planned {
  const { vpn, machine, options } = input;
  const path = MANAGED_FILES.wireguard;
  const other = `${OTHER_TUNNEL_INTERFACE}: it is left alone`;
  if (vpn === null || vpn.address === "") {
    const changes = wholeFileChanges(input, path, null, 0);
    const down = machine.tunnel === "ours" && !options.noTunnel;
    const detail = `the server gave this device no VPN address: no tunnel${down ? " (brought down)" : ""}${machine.tunnel === "other" ? `; ${other}` : ""}`;
    return { ...planned("reported", detail, changes), tunnel: down ? ["down"] : [] };
  }
  if (options.wireGuardPrivateKey === null)
    return planned("failed", "the device's WireGuard private key (wg.key in the state folder) is missing");
  const problem = vpnSettingsProblem(vpn, options.wireGuardPrivateKey);
  if (problem !== null) return planned("failed", `the server's VPN settings cannot be written: ${problem}`);
  const desired = renderWireGuardConf(vpn, options.wireGuardPrivateKey);
  const changes = wholeFileChanges(input, path, desired, 0o600);
  const target = `${TUNNEL_INTERFACE} to ${vpn.endpoint} as ${vpn.address}`;
  if (options.noTunnel) {
    const found = {
      absent: "not brought up",
      ours: "brought up earlier, left as it is",
      other: `not brought up: ${OTHER_TUNNEL_INTERFACE}`,
    }[machine.tunnel];
    return planned("enforced", `${path} written for ${target}; ${found} (--no-tunnel)`, changes);
  }
  // wg-quick up would fail on it, and a syncconf or down would change someone else's tunnel.
  if (machine.tunnel === "other")
    return planned("failed", `${target} is not brought up: ${other} (remove or rename it)`);
  const isUp = machine.tunnel === "ours";
  const before = changes[0]?.before ?? null;
  let tunnel: TunnelAction[];
  let how: string;
  if (changes.length === 0) {
    tunnel = isUp ? [] : ["up"];
    how = isUp ? "up, settings unchanged" : "brought up (wg-quick up)";
  } else if (!isUp) {
    tunnel = ["up"];
    how = "brought up (wg-quick up)";
  } else if (before !== null && changesOnlyLiveFields(before, desired)) {
    tunnel = ["syncconf"];
    how = "new peer settings applied live (wg syncconf)";
  } else {
    tunnel = ["down", "up"];
    how = "restarted (wg-quick down, up): its addresses, DNS or routes changed";
  }
  return { outcome: "enforced", detail: `${target}: ${how}`, changes, tunnel };
}

/** Each policy setting's plan, in the document's order, then the tunnel's. */
export function planEnforcement(input: PlanInput): SettingPlan[] {
  return planEach(input, PLANNERS, planTunnel);
}

/**
 * Each policy setting's plan by `planners`, in the document's order, then the tunnel's: a planner that
 * throws makes its setting `failed` with the error, and the others go on.
 */
export function planEach<Input>(
  input: Input,
  planners: Record<PolicySettingName, (input: Input) => Planned>,
  tunnelPlanner: (input: Input) => Planned,
): SettingPlan[] {
  const plans: SettingPlan[] = [];
  const entries: [SettingPlan["setting"], (input: Input) => Planned][] = [
    ...POLICY_SETTINGS.map(
      (setting) => [setting, planners[setting]] as [PolicySettingName, (input: Input) => Planned],
    ),
    [TUNNEL_SETTING, tunnelPlanner],
  ];
  for (const [setting, plan] of entries) {
    try {
      plans.push({ setting, ...plan(input) });
    } catch (error) {
      plans.push({ setting, ...planned("failed", (error as Error).message) });
    }
  }
  return plans;
}
