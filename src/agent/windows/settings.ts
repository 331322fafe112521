/**
 * Where Windows keeps what the agent reads and enforces: the registry keys (as Intune's policies write
 * them) and the files, as paths under ROOT (the system drive, `C:\`).
 */
import { posix, win32 } from "node:path";
import type { UsbDeviceClass } from "../../domain/policies/policy-document";

/** The version of Windows (CurrentMajorVersionNumber, CurrentBuild, UBR, DisplayVersion, ProductName). */
export const OS_VERSION_KEY = "HKLM\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion";
/** A stable id of the Windows installation (MachineGuid), made at setup. */
export const CRYPTOGRAPHY_KEY = "HKLM\\SOFTWARE\\Microsoft\\Cryptography";
/** The USB mass-storage driver's service: Start = 4 disables it (3, on demand, is Windows' default). */
export const USBSTOR_SERVICE = "HKLM\\SYSTEM\\CurrentControlSet\\Services\\USBSTOR";
/**
 * The removable-storage access policy of the Removable Disks class (Group Policy "Removable Disks: Deny
 * read/write access", Intune's ADMX_RemovableStorage): Deny_Read and Deny_Write = 1.
 */
export const REMOVABLE_DISKS_POLICY =
  "HKLM\\SOFTWARE\\Policies\\Microsoft\\Windows\\RemovableStorageDevices\\{53f5630d-b6bf-11d0-94f2-00a0c91efb8b}";
/** The device-installation restriction policy (Intune's DeviceInstallation CSP writes the same values). */
export const DEVICE_INSTALL_RESTRICTIONS =
  "HKLM\\SOFTWARE\\Policies\\Microsoft\\Windows\\DeviceInstall\\Restrictions";
export const ALLOWED_DEVICE_IDS = `${DEVICE_INSTALL_RESTRICTIONS}\\AllowDeviceIDs`;
export const ALLOWED_DEVICE_CLASSES = `${DEVICE_INSTALL_RESTRICTIONS}\\AllowDeviceClasses`;
/** Interactive logon: Machine inactivity limit (InactivityTimeoutSecs). */
export const INACTIVITY_POLICY = "HKLM\\SOFTWARE\\Microsoft\\Windows\\CurrentVersion\\Policies\\System";
/** Group Policy's firewall settings, per profile (they win over the local ones). */
export const FIREWALL_POLICY = "HKLM\\SOFTWARE\\Policies\\Microsoft\\WindowsFirewall";
const LOCAL_FIREWALL = "HKLM\\SYSTEM\\CurrentControlSet\\Services\\SharedAccess\\Parameters\\FirewallPolicy";
/** Each firewall profile: its name, its local key, its policy key's last part. */
export const FIREWALL_PROFILES: readonly [string, string, string][] = [
  ["domain", `${LOCAL_FIREWALL}\\DomainProfile`, "DomainProfile"],
  ["private", `${LOCAL_FIREWALL}\\StandardProfile`, "PrivateProfile"],
  ["public", `${LOCAL_FIREWALL}\\PublicProfile`, "PublicProfile"],
];
/** The profiles of the machine's users (ProfileImagePath per SID). */
export const PROFILE_LIST = "HKLM\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\ProfileList";

/** The tunnel: WireGuard for Windows names the tunnel after its file and its service after the tunnel. */
export const TUNNEL_NAME = "bulwark";
export const TUNNEL_SERVICE = `WireGuardTunnel$${TUNNEL_NAME}`;

/**
 * The device setup classes (learn.microsoft.com/windows-hardware/drivers/install/system-defined-device-
 * setup-classes-available-to-vendors) that stand for each USB class a policy can allow. `hub` (the USB
 * class: host controllers and hubs) is always allowed; `other` names no class.
 */
export const SETUP_CLASSES: Record<UsbDeviceClass, readonly string[]> = {
  audio: ["{4d36e96c-e325-11ce-bfc1-08002be10318}", "{c166523c-fe0c-4a94-a586-f1a80cfbbf3e}"],
  communications: ["{4d36e978-e325-11ce-bfc1-08002be10318}", "{4d36e96d-e325-11ce-bfc1-08002be10318}"],
  hid: [
    "{745a17a0-74d3-11d0-b6fe-00a0c9053d92}",
    "{4d36e96b-e325-11ce-bfc1-08002be10318}",
    "{4d36e96f-e325-11ce-bfc1-08002be10318}",
  ],
  imaging: ["{6bdd1fc6-810f-11d0-bec7-08002be2092f}"],
  printer: ["{4d36e979-e325-11ce-bfc1-08002be10318}"],
  mass_storage: ["{4d36e967-e325-11ce-bfc1-08002be10318}", "{eec5ad98-8080-425f-922a-dabf3de3f69a}"],
  hub: ["{36fc9e60-c465-11cf-8056-444553540000}"],
  smart_card: ["{50dd5230-ba8a-11d1-bf5d-0000f805f530}"],
  video: ["{ca3e7ab9-b4c3-4ae6-8251-579ef933890f}"],
  wireless: ["{e0cbf06c-cd8b-4647-bb8a-263b43f0f974}"],
  other: [],
};

/** `vvvv:pppp` as Windows' hardware id of the device (`USB\VID_VVVV&PID_PPPP`). */
export function hardwareIdOf(vendorProduct: string): string | null {
  const match = /^([0-9a-fA-F]{4}):([0-9a-fA-F]{4})$/.exec(vendorProduct);
  return match ? `USB\\VID_${match[1]?.toUpperCase()}&PID_${match[2]?.toUpperCase()}` : null;
}

/** The machine's folders from its environment (SystemDrive, SystemRoot, ProgramData, ProgramFiles). */
export interface WindowsFolders {
  /** ROOT: the system drive's root (`C:\`). */
  root: string;
  /** The hosts file and the tunnel's file, as paths under ROOT (`/Windows/System32/drivers/etc/hosts`). */
  hosts: string;
  wireguard: string;
  /** Where WireGuard for Windows is installed. */
  wireguardFolder: string;
}

/** A Windows path on the system drive as a path under ROOT: `C:\Windows` -> `/Windows`. */
function underRoot(root: string, path: string): string {
  const relative = win32.relative(root, path);
  if (relative.startsWith("..") || win32.isAbsolute(relative))
    throw new Error(`${path} is not on the system drive ${root}`);
  return posix.join("/", ...relative.split("\\"));
}

/** The folders of this Windows, from `env` (process.env by default); the tunnel's file beside the state. */
export function windowsFolders(
  stateDir: string,
  env: Record<string, string | undefined> = process.env,
): WindowsFolders {
  const drive = env.SystemDrive ?? "C:";
  const root = `${drive}\\`;
  const systemRoot = env.SystemRoot ?? `${drive}\\Windows`;
  return {
    root,
    hosts: posix.join(underRoot(root, systemRoot), "System32/drivers/etc/hosts"),
    wireguard: posix.join(underRoot(root, win32.resolve(stateDir)), `${TUNNEL_NAME}.conf`),
    wireguardFolder: win32.join(env.ProgramFiles ?? `${drive}\\Program Files`, "WireGuard"),
  };
}
