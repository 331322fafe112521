/**
 * The Windows planner: each policy setting's outcome on Windows 10/11 and the registry values and files
 * it changes, as the Linux planner does for Linux (the same outcomes, journal and plan format). It reads
 * and writes nothing; windows/enforce.ts reads the machine, then carries the plan out.
 */
import type { PolicyData } from "../../domain/policies/policy-document";
import { type Journal, registryJournalEntry } from "../enforce/journal";
import {
  describeFact,
  type MachineState,
  type PlanInput,
  type Planned,
  planEach,
  planHostsSection,
  planned,
  planSplitTunnel,
  type RegistryChange,
  reportFromFactsWith,
  type SettingPlan,
  wholeFileChanges,
} from "../enforce/plan";
import { WINDOWS_SUPPORT } from "../enforce/platform-support";
import { renderWireGuardConf, type VpnSettings, vpnSettingsProblem } from "../enforce/render-wireguard";
import type { PolicySettingName } from "../enforce/settings";
import type { RegistryValue } from "./registry";
import {
  ALLOWED_DEVICE_CLASSES,
  ALLOWED_DEVICE_IDS,
  DEVICE_INSTALL_RESTRICTIONS,
  hardwareIdOf,
  REMOVABLE_DISKS_POLICY,
  SETUP_CLASSES,
  TUNNEL_NAME,
  TUNNEL_SERVICE,
  USBSTOR_SERVICE,
  type WindowsFolders,
} from "./settings";

/** A registry value's identity in the machine state: `KEY` + `\u0000` + `NAME` (case as the agent writes it). */
export function registryId(key: string, name: string): string {
  return `${key}\u0000${name}`;
}

/** What a Windows machine holds now, as the planner needs it. */
export interface WindowsMachineState extends MachineState {
  /** Every value the agent manages or has managed, as found (null: absent). */
  registry: Map<string, RegistryValue | null>;
  /** Whether the USBSTOR driver's service key exists (a machine that never had USB storage has none). */
  usbstorPresent: boolean;
  /** Whether WireGuard for Windows (wireguard.exe) is installed. */
  wireguardInstalled: boolean;
  /** Keys that could not be read (lower case), with why: the settings that write there fail, the others go on. */
  unreadable?: Map<string, string>;
}

export interface WindowsPlanInput extends PlanInput {
  machine: WindowsMachineState;
  folders: WindowsFolders;
}

const dword = (value: number): RegistryValue => ({ type: "REG_DWORD", data: `0x${value.toString(16)}` });
const text = (value: string): RegistryValue => ({ type: "REG_SZ", data: value });

function sameValue(a: RegistryValue | null, b: RegistryValue | null): boolean {
  if (a === null || b === null) return a === b;
  if (a.type !== b.type) return false;
  if (a.type === "REG_DWORD") return Number.parseInt(a.data, 16) === Number.parseInt(b.data, 16);
  return a.data === b.data;
}

/**
 * The changes that make each value of `desired` hold its value (null: the agent has no value there), and
 * that give back, for a value the agent no longer wants, what the journal says was there before.
 */
function registryChanges(
  input: WindowsPlanInput,
  desired: readonly { key: string; name: string; value: RegistryValue | null }[],
): RegistryChange[] {
  const changes: RegistryChange[] = [];
  for (const { key, name, value } of desired) {
    const problem = input.machine.unreadable?.get(key.toLowerCase());
    if (problem !== undefined) throw new Error(`${key} cannot be read: ${problem}`);
    const before = input.machine.registry.get(registryId(key, name)) ?? null;
    const entry = registryJournalEntry(input.machine.journal, key, name);
    if (value !== null) {
      if (!sameValue(before, value)) changes.push({ key, name, before, after: value, release: false });
      continue;
    }
    if (entry === undefined) continue;
    changes.push({ key, name, before, after: entry.original, release: true });
  }
  return changes;
}

/** The values of a list key (`1`, `2`, ...) the agent wants, and the removal of the ones it wrote before. */
function listValues(
  input: WindowsPlanInput,
  key: string,
  items: readonly string[],
): { key: string; name: string; value: RegistryValue | null }[] {
  const wanted = items.map((item, index) => ({ key, name: String(index + 1), value: text(item) }));
  const recorded = (input.machine.journal.registry ?? [])
    .filter((entry) => entry.key.toLowerCase() === key.toLowerCase())
    .map((entry) => entry.name);
  const extra = recorded
    .filter((name) => !wanted.some((item) => item.name === name))
    .map((name) => ({ key, name, value: null }));
  return [...wanted, ...extra];
}

function unsupported(setting: PolicySettingName): (input: WindowsPlanInput) => Planned {
  return () => planned("unsupported", WINDOWS_SUPPORT[setting].how);
}

function withRegistry(base: Planned, registry: RegistryChange[]): Planned {
  return { ...base, registry };
}

function planExternalStorage(input: WindowsPlanInput): Planned {
  const allowed = input.policy.storage.external_storage_allowed;
  const driver = input.machine.usbstorPresent
    ? [{ key: USBSTOR_SERVICE, name: "Start", value: allowed ? null : dword(4) }]
    : [];
  const registry = registryChanges(input, [
    ...driver,
    { key: REMOVABLE_DISKS_POLICY, name: "Deny_Read", value: allowed ? null : dword(1) },
    { key: REMOVABLE_DISKS_POLICY, name: "Deny_Write", value: allowed ? null : dword(1) },
  ]);
  if (allowed)
    return withRegistry(planned("enforced", "external storage allowed: no storage policy"), registry);
  const how = [
    input.machine.usbstorPresent
      ? "the USB storage driver is disabled (USBSTOR Start = 4)"
      : "this machine has no USBSTOR driver service",
    "removable disks are denied read and write (RemovableStorageDevices policy)",
  ];
  return withRegistry(
    planned("enforced", `${how.join("; ")}; a drive plugged in already stays usable until it is unplugged`),
    registry,
  );
}

function isUsbBlocked(policy: PolicyData): boolean {
  return !policy.usb.allowed && !policy.usb.audit_only;
}

/** The hardware ids of the whitelist (the ones that are no vendor:product are left out). */
function allowedIds(policy: PolicyData): string[] {
  return policy.usb.whitelist.map(hardwareIdOf).filter((id): id is string => id !== null);
}

/**
 * The network adapters WireGuard for Windows makes each time its tunnel service starts (WireGuardNT's,
 * and Wintun's of older versions): allowed always, or a device policy would keep the tunnel down.
 */
const TUNNEL_ADAPTER_IDS = ["WireGuard", "Wintun"];

/** The setup classes of the allowed classes, hubs and host controllers always. */
function allowedClasses(policy: PolicyData): string[] {
  const classes = new Set<string>(SETUP_CLASSES.hub);
  for (const name of policy.usb.allowed_classes)
    for (const guid of Object.hasOwn(SETUP_CLASSES, name) ? SETUP_CLASSES[name] : []) classes.add(guid);
  return [...classes];
}

function planUsbAllowed(input: WindowsPlanInput): Planned {
  const { policy } = input;
  const blocked = isUsbBlocked(policy);
  const ids = blocked ? [...allowedIds(policy), ...TUNNEL_ADAPTER_IDS] : [];
  const classes = blocked ? allowedClasses(policy) : [];
  const on = (value: number) => (blocked ? dword(value) : null);
  const registry = registryChanges(input, [
    { key: DEVICE_INSTALL_RESTRICTIONS, name: "DenyUnspecified", value: on(1) },
    { key: DEVICE_INSTALL_RESTRICTIONS, name: "AllowDeviceIDs", value: on(1) },
    { key: DEVICE_INSTALL_RESTRICTIONS, name: "AllowDeviceClasses", value: on(1) },
    ...listValues(input, ALLOWED_DEVICE_IDS, ids),
    ...listValues(input, ALLOWED_DEVICE_CLASSES, classes),
  ]);
  if (!blocked) {
    const reason = policy.usb.allowed
      ? "every USB device allowed: no device-installation policy"
      : "usb.audit_only: devices are not blocked, so no device-installation policy is written";
    return withRegistry(planned(policy.usb.allowed ? "enforced" : "reported", reason), registry);
  }
  return withRegistry(
    planned(
      "enforced",
      "device-installation policy: a device of any kind, not only USB (a dock, a monitor, a network adapter), that is not allowed by hardware id or setup class cannot be installed (USB hubs and controllers, and WireGuard's tunnel adapter, always can); it applies to devices installed from now on, and a device installed already keeps working",
    ),
    registry,
  );
}

function planUsbWhitelist({ policy }: WindowsPlanInput): Planned {
  if (!isUsbBlocked(policy)) return planned("reported", "no effect while USB devices are not blocked");
  const ids = allowedIds(policy);
  const left = policy.usb.whitelist.length - ids.length;
  return planned(
    "enforced",
    `${ids.length} device${ids.length === 1 ? "" : "s"} allowed by hardware id (USB\\VID_...&PID_...) in ${ALLOWED_DEVICE_IDS}${left > 0 ? `; ${left} entr${left === 1 ? "y is" : "ies are"} no vendor:product and left out` : ""}`,
  );
}

function planUsbClasses({ policy }: WindowsPlanInput): Planned {
  if (!isUsbBlocked(policy)) return planned("reported", "no effect while USB devices are not blocked");
  const names = policy.usb.allowed_classes.filter((name) => (SETUP_CLASSES[name] ?? []).length > 0);
  const left = policy.usb.allowed_classes.filter((name) => (SETUP_CLASSES[name] ?? []).length === 0);
  return planned(
    "enforced",
    `allowed by device setup class in ${ALLOWED_DEVICE_CLASSES}: ${names.length > 0 ? names.join(", ") : "none"} (USB hubs and controllers always)${left.length > 0 ? `; ${left.join(", ")} names no setup class and is not written` : ""}`,
  );
}

function planUsbAuditOnly({ policy }: WindowsPlanInput): Planned {
  return planned(
    "reported",
    policy.usb.audit_only
      ? "audit only: USB devices are not blocked (Windows logs device installations in its SetupAPI log)"
      : "off: USB devices are blocked as usb.allowed says",
  );
}

function planEncryption({ policy, facts }: WindowsPlanInput): Planned {
  const fact = describeFact(
    "disk_encrypted",
    facts.disk_encrypted,
    "whether BitLocker protects the system drive",
  );
  if (!policy.storage.encryption_required) return planned("reported", `not required (${fact})`);
  if (facts.disk_encrypted === false)
    return planned(
      "reported",
      `required, but ${fact}: turn BitLocker on for the system drive (the agent does not encrypt it in this version)`,
    );
  return planned("reported", `required; ${fact}`);
}

function planVpnRequired({ policy, facts }: WindowsPlanInput): Planned {
  const fact = describeFact("vpn_connected", facts.vpn_connected, `whether the ${TUNNEL_NAME} tunnel is up`);
  if (!policy.network.vpn_required) return planned("reported", `not required (${fact})`);
  if (facts.vpn_connected === false)
    return planned("reported", `required, but ${fact}: no handshake on ${TUNNEL_NAME} in the last 180 s`);
  return planned("reported", `required; ${fact}`);
}

/** Whether the server's VPN settings send all IPv4 traffic through the tunnel (WireGuard's kill switch then). */
function routesEverything(vpn: VpnSettings | null): boolean {
  return vpn?.allowed_ips.includes("0.0.0.0/0") ?? false;
}

/** Why the tunnel's service will not be running after this pass, or null when it will. */
function tunnelNotRunning({ machine, options }: WindowsPlanInput): string | null {
  if (options.wireGuardPrivateKey === null) return "the device's WireGuard private key is missing";
  if (!machine.wireguardInstalled) return "WireGuard for Windows is not installed";
  if (machine.tunnel === "other") return `a ${TUNNEL_SERVICE} service exists that this agent did not install`;
  if (options.noTunnel && machine.tunnel !== "ours") return "the tunnel is not installed (--no-tunnel)";
  return null;
}

function planVpnAlwaysOn(input: WindowsPlanInput): Planned {
  const { policy, vpn } = input;
  if (!policy.network.vpn_always_on)
    return planned(
      "reported",
      routesEverything(vpn)
        ? "off: the tunnel's 0.0.0.0/0 is written as 0.0.0.0/1 and 128.0.0.0/1, so WireGuard's kill switch stays off"
        : "off",
    );
  if (vpn === null || vpn.address === "")
    return planned(
      "failed",
      "the server gave this device no VPN address: there is no tunnel to keep always on",
    );
  if (!routesEverything(vpn))
    return planned(
      "failed",
      `WireGuard for Windows blocks traffic outside the tunnel only when its one peer routes 0.0.0.0/0, and the server's VPN settings route ${vpn.allowed_ips.join(", ")}: set the VPN's allowed IPs to 0.0.0.0/0 for this policy`,
    );
  const notRunning = tunnelNotRunning(input);
  if (notRunning !== null)
    return planned("failed", `not in effect: the kill switch is the tunnel service's, and ${notRunning}`);
  return planned(
    "enforced",
    "the tunnel routes 0.0.0.0/0 through one peer, so WireGuard for Windows blocks traffic outside it (its kill switch) while the tunnel service runs",
  );
}

function planWorkPaths(input: WindowsPlanInput): Planned {
  const paths = input.policy.wipe?.work_paths ?? [];
  if (paths.length === 0)
    return planned("reported", "the policy names no work paths: a wipe erases no files");
  const inHomes = paths.some((path) => path.startsWith("~/"))
    ? " (~ is each local user's profile folder)"
    : "";
  return planned("reported", `a wipe erases ${paths.join(", ")}${inHomes}; nothing is changed before one`);
}

/**
 * The tunnel's settings for WireGuard for Windows: as on Linux, except that a 0.0.0.0/0 the policy does
 * not want always on is split in two halves (and ::/0 likewise), which routes the same traffic without
 * turning on WireGuard for Windows' kill switch (its documented behaviour for exactly /0).
 */
export function windowsTunnelSettings(vpn: VpnSettings, alwaysOn: boolean): VpnSettings {
  if (alwaysOn) return vpn;
  const split: Record<string, string[]> = {
    "0.0.0.0/0": ["0.0.0.0/1", "128.0.0.0/1"],
    "::/0": ["::/1", "8000::/1"],
  };
  return { ...vpn, allowed_ips: vpn.allowed_ips.flatMap((network) => split[network] ?? [network]) };
}

function planTunnel(input: WindowsPlanInput): Planned {
  const { vpn, machine, options, folders } = input;
  const path = folders.wireguard;
  if (vpn === null || vpn.address === "") {
    const changes = wholeFileChanges(input, path, null, 0);
    const down = machine.tunnel === "ours" && !options.noTunnel;
    return {
      ...planned(
        "reported",
        `the server gave this device no VPN address: no tunnel${down ? " (uninstalled)" : ""}`,
        changes,
      ),
      tunnel: down ? ["down"] : [],
    };
  }
  if (options.wireGuardPrivateKey === null)
    return planned("failed", "the device's WireGuard private key (wg.key in the state folder) is missing");
  const problem = vpnSettingsProblem(vpn, options.wireGuardPrivateKey);
  if (problem !== null) return planned("failed", `the server's VPN settings cannot be written: ${problem}`);
  const settings = windowsTunnelSettings(vpn, input.policy.network.vpn_always_on);
  const desired = renderWireGuardConf(settings, options.wireGuardPrivateKey);
  const changes = wholeFileChanges(input, path, desired, 0o600);
  const target = `${TUNNEL_NAME} to ${vpn.endpoint} as ${vpn.address}`;
  if (options.noTunnel)
    return planned(
      "enforced",
      `${path} written for ${target}; the tunnel service is left as it is (--no-tunnel)`,
      changes,
    );
  if (!machine.wireguardInstalled)
    return planned(
      "failed",
      `WireGuard for Windows is not installed (${folders.wireguardFolder}\\wireguard.exe): install it from wireguard.com/install; ${path} is not written until then`,
    );
  if (machine.tunnel === "other")
    return planned(
      "failed",
      `${target} is not installed: a ${TUNNEL_SERVICE} service exists that this agent did not install (remove it, or rename its tunnel)`,
    );
  const isUp = machine.tunnel === "ours";
  if (changes.length === 0 && isUp)
    return planned("enforced", `${target}: its service is installed, settings unchanged`);
  return {
    outcome: "enforced",
    detail: `${target}: ${isUp ? "reinstalled with its new settings" : "installed as the service"} ${TUNNEL_SERVICE} (wireguard /installtunnelservice)`,
    changes,
    tunnel: isUp ? ["down", "up"] : ["up"],
  };
}

const PLANNERS: Record<PolicySettingName, (input: WindowsPlanInput) => Planned> = {
  "dlp.clipboard_sharing": unsupported("dlp.clipboard_sharing"),
  "dlp.clipboard_direction": unsupported("dlp.clipboard_direction"),
  "dlp.screenshot_allowed": unsupported("dlp.screenshot_allowed"),
  "dlp.print_allowed": unsupported("dlp.print_allowed"),
  "dlp.sensitive_data_patterns": unsupported("dlp.sensitive_data_patterns"),
  "network.vpn_required": planVpnRequired,
  "network.vpn_always_on": planVpnAlwaysOn,
  "network.allowed_domains": unsupported("network.allowed_domains"),
  "network.blocked_domains": (input) => planHostsSection(input, input.folders.hosts),
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

/** Each policy setting's plan on Windows, in the document's order, then the tunnel's. */
export function planWindowsEnforcement(input: WindowsPlanInput): SettingPlan[] {
  return planEach(input, PLANNERS, planTunnel);
}

/** The settings read from the facts, planned again after enforcement (as on Linux). */
export const windowsReportFromFacts = reportFromFactsWith<WindowsPlanInput>({
  "storage.encryption_required": planEncryption,
  "network.vpn_required": planVpnRequired,
});

/** Every registry value the planner may write, for reading the machine's state before planning. */
export function managedRegistryValues(journal: Journal): { key: string; name: string }[] {
  const fixed = [
    { key: USBSTOR_SERVICE, name: "Start" },
    { key: REMOVABLE_DISKS_POLICY, name: "Deny_Read" },
    { key: REMOVABLE_DISKS_POLICY, name: "Deny_Write" },
    { key: DEVICE_INSTALL_RESTRICTIONS, name: "DenyUnspecified" },
    { key: DEVICE_INSTALL_RESTRICTIONS, name: "AllowDeviceIDs" },
    { key: DEVICE_INSTALL_RESTRICTIONS, name: "AllowDeviceClasses" },
  ];
  const recorded = (journal.registry ?? []).map(({ key, name }) => ({ key, name }));
  return [...fixed, ...recorded];
}
