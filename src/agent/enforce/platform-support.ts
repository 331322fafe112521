/**
 * What each platform does with each policy setting, in one table: the Linux agent's planner takes its
 * reasons from it (a setting it cannot enforce says why in the same words), and the console's policy
 * editor shows it beside each setting, so an administrator sees before saving what a device will do.
 * Loaded by the agent and bundled into the console: it imports nothing at run time.
 */
import type { PolicySettingName } from "./settings";

/**
 * What a platform does with a setting: changes the machine, only checks and reports, cannot, or prepares
 * it for the person at the machine to approve (macOS: a configuration profile).
 */
export type SupportOutcome = "enforced" | "reported" | "unsupported" | "pending_approval";

export interface SettingSupport {
  outcome: SupportOutcome;
  /** How it is enforced or checked, or why it cannot be. */
  how: string;
}

const LINUX_HAS_NO_DLP =
  "Linux has no system-wide control for this (X11 and each Wayland compositor decide for themselves)";

/** The Linux agent, setting by setting (docs/agent.md says how each is enforced). */
export const LINUX_SUPPORT: Record<PolicySettingName, SettingSupport> = {
  "dlp.clipboard_sharing": {
    outcome: "unsupported",
    how: `the clipboard between work and personal apps: ${LINUX_HAS_NO_DLP}`,
  },
  "dlp.clipboard_direction": {
    outcome: "unsupported",
    how: `the clipboard's direction: ${LINUX_HAS_NO_DLP}`,
  },
  "dlp.screenshot_allowed": { outcome: "unsupported", how: `screenshots: ${LINUX_HAS_NO_DLP}` },
  "dlp.print_allowed": {
    outcome: "unsupported",
    how: "printing is not controlled by the agent on Linux in this version",
  },
  "dlp.sensitive_data_patterns": {
    outcome: "unsupported",
    how: "the agent does not inspect content on Linux",
  },
  "network.vpn_required": {
    outcome: "reported",
    how: "judged by vpn_connected: the bulwark WireGuard tunnel up, with a handshake in the last 180 s",
  },
  "network.vpn_always_on": {
    outcome: "unsupported",
    how: "blocking traffic while the tunnel is down is not done on Linux in this version",
  },
  "network.allowed_domains": {
    outcome: "unsupported",
    how: "allowing only some domains needs a filtering DNS resolver, which the agent does not run",
  },
  "network.blocked_domains": {
    outcome: "enforced",
    how: "each exact name maps to 0.0.0.0 and :: in /etc/hosts; a wildcard (*.example.com) is not enforced, and programs with their own resolver or DNS over HTTPS are not stopped",
  },
  "network.split_tunnel": {
    outcome: "reported",
    how: "the server's VPN settings (AllowedIPs) decide what the tunnel carries",
  },
  "usb.allowed": {
    outcome: "enforced",
    how: "usbguard rules (hubs, the whitelist and the allowed classes, then block); in effect only while usbguard's daemon runs them, else failed",
  },
  "usb.whitelist": { outcome: "enforced", how: "one usbguard allow rule per vendor:product" },
  "usb.allowed_classes": {
    outcome: "enforced",
    how: "one usbguard rule per class (other has no class code and is left out)",
  },
  "usb.audit_only": { outcome: "reported", how: "when on, nothing is blocked and no rules are written" },
  "storage.encryption_required": {
    outcome: "reported",
    how: "judged by disk_encrypted (/ on dm-crypt, LUKS or LVM on LUKS); a running system cannot encrypt itself",
  },
  "storage.external_storage_allowed": {
    outcome: "enforced",
    how: "a modprobe rule: the usb-storage and uas drivers cannot load (one already loaded stays until it is unloaded or the machine restarts)",
  },
  "storage.cloud_sync_allowed": {
    outcome: "unsupported",
    how: "cloud sync clients are not controlled by the agent on Linux",
  },
  "storage.max_file_size_mb": {
    outcome: "unsupported",
    how: "file transfers are not inspected by the agent on Linux",
  },
  "wipe.work_paths": {
    outcome: "enforced",
    how: "erased when a wipe runs: folders emptied, files deleted, links never followed, other mounts left",
  },
};

const WINDOWS_HAS_NO_DLP = "Windows has no system-wide control for this that a service can set";

/** The Windows agent, setting by setting (docs/agent.md says how each is enforced). */
export const WINDOWS_SUPPORT: Record<PolicySettingName, SettingSupport> = {
  "dlp.clipboard_sharing": {
    outcome: "unsupported",
    how: `the clipboard between work and personal apps: ${WINDOWS_HAS_NO_DLP}`,
  },
  "dlp.clipboard_direction": {
    outcome: "unsupported",
    how: `the clipboard's direction: ${WINDOWS_HAS_NO_DLP}`,
  },
  "dlp.screenshot_allowed": { outcome: "unsupported", how: `screenshots: ${WINDOWS_HAS_NO_DLP}` },
  "dlp.print_allowed": {
    outcome: "unsupported",
    how: "printing is not controlled by the agent on Windows in this version (only stopping the spooler would, for every printer)",
  },
  "dlp.sensitive_data_patterns": {
    outcome: "unsupported",
    how: "the agent does not inspect content on Windows",
  },
  "network.vpn_required": {
    outcome: "reported",
    how: "judged by vpn_connected: the WireGuardTunnel$bulwark service running, with a handshake in the last 180 s",
  },
  "network.vpn_always_on": {
    outcome: "enforced",
    how: "WireGuard for Windows' kill switch: on when the tunnel's one peer routes 0.0.0.0/0 (the server's VPN settings must); failed otherwise",
  },
  "network.allowed_domains": {
    outcome: "unsupported",
    how: "allowing only some domains needs a filtering DNS resolver, which the agent does not run",
  },
  "network.blocked_domains": {
    outcome: "enforced",
    how: "each exact name maps to 0.0.0.0 and :: in %SystemRoot%\\System32\\drivers\\etc\\hosts; a wildcard is not enforced, and programs with their own resolver or DNS over HTTPS are not stopped",
  },
  "network.split_tunnel": {
    outcome: "reported",
    how: "the server's VPN settings (AllowedIPs) decide what the tunnel carries",
  },
  "usb.allowed": {
    outcome: "enforced",
    how: "the device-installation restriction policy (deny unspecified devices, of every kind, not only USB; allow the whitelist's hardware ids and the allowed setup classes); devices installed before keep working",
  },
  "usb.whitelist": {
    outcome: "enforced",
    how: "one allowed hardware id (USB\\VID_vvvv&PID_pppp) per vendor:product",
  },
  "usb.allowed_classes": {
    outcome: "enforced",
    how: "the device setup classes of each class (other has none and is left out); USB hubs and controllers always",
  },
  "usb.audit_only": { outcome: "reported", how: "when on, nothing is blocked and no policy is written" },
  "storage.encryption_required": {
    outcome: "reported",
    how: "judged by disk_encrypted (BitLocker's ProtectionStatus of the system drive); the agent does not turn BitLocker on",
  },
  "storage.external_storage_allowed": {
    outcome: "enforced",
    how: "the USB storage driver disabled (USBSTOR Start = 4) and removable disks denied read and write (the RemovableStorageDevices policy Intune writes); a drive plugged in already stays until it is unplugged",
  },
  "storage.cloud_sync_allowed": {
    outcome: "unsupported",
    how: "cloud sync clients are not controlled by the agent on Windows in this version",
  },
  "storage.max_file_size_mb": {
    outcome: "unsupported",
    how: "file transfers are not inspected by the agent on Windows",
  },
  "wipe.work_paths": {
    outcome: "enforced",
    how: "erased when a wipe runs: ~ is each local user's profile folder; links and junctions are never followed",
  },
};

const MACOS_HAS_NO_DLP = "macOS has no system-wide control for this that a daemon or a profile can set";

/**
 * Why USB is not blocked on a Mac: macOS 15's ExternalStorage restriction applies to MDM-supervised Macs
 * only, and blocking devices as they attach needs an Endpoint Security entitlement Apple grants.
 */
const MACOS_USB =
  "not blocked on macOS: it needs an MDM-supervised Mac (macOS 15's ExternalStorage restriction) or an Endpoint Security entitlement Apple grants, and this agent has neither";

/** The macOS agent, setting by setting (docs/agent.md says how each is enforced). */
export const MACOS_SUPPORT: Record<PolicySettingName, SettingSupport> = {
  "dlp.clipboard_sharing": {
    outcome: "unsupported",
    how: `the clipboard between work and personal apps: ${MACOS_HAS_NO_DLP}`,
  },
  "dlp.clipboard_direction": {
    outcome: "unsupported",
    how: `the clipboard's direction: ${MACOS_HAS_NO_DLP}`,
  },
  "dlp.screenshot_allowed": {
    outcome: "pending_approval",
    how: "a configuration profile (allowScreenShot false) the agent writes and opens for the person at the Mac to approve in System Settings (macOS installs no profile silently); pending approval until it is installed",
  },
  "dlp.print_allowed": { outcome: "unsupported", how: "printing is not controlled by the agent on macOS" },
  "dlp.sensitive_data_patterns": {
    outcome: "unsupported",
    how: "the agent does not inspect content on macOS",
  },
  "network.vpn_required": {
    outcome: "reported",
    how: "judged by vpn_connected: the bulwark tunnel (Homebrew's wg-quick) up, with a handshake in the last 180 s",
  },
  "network.vpn_always_on": {
    outcome: "unsupported",
    how: "wg-quick on macOS has no kill switch: traffic is not blocked while the tunnel is down",
  },
  "network.allowed_domains": {
    outcome: "unsupported",
    how: "allowing only some domains needs a filtering DNS resolver, which the agent does not run",
  },
  "network.blocked_domains": {
    outcome: "enforced",
    how: "each exact name maps to 0.0.0.0 and :: in /etc/hosts, then the resolver's cache is flushed; a wildcard is not enforced, and programs with their own resolver or DNS over HTTPS are not stopped",
  },
  "network.split_tunnel": {
    outcome: "reported",
    how: "the server's VPN settings (AllowedIPs) decide what the tunnel carries",
  },
  "usb.allowed": { outcome: "unsupported", how: `USB devices are ${MACOS_USB}` },
  "usb.whitelist": { outcome: "unsupported", how: `USB devices are ${MACOS_USB}` },
  "usb.allowed_classes": { outcome: "unsupported", how: `USB devices are ${MACOS_USB}` },
  "usb.audit_only": { outcome: "unsupported", how: `USB devices are ${MACOS_USB}` },
  "storage.encryption_required": {
    outcome: "reported",
    how: "judged by disk_encrypted (fdesetup isactive: FileVault on); the agent does not turn FileVault on",
  },
  "storage.external_storage_allowed": { outcome: "unsupported", how: `external storage is ${MACOS_USB}` },
  "storage.cloud_sync_allowed": {
    outcome: "unsupported",
    how: "cloud sync clients are not controlled by the agent on macOS",
  },
  "storage.max_file_size_mb": {
    outcome: "unsupported",
    how: "file transfers are not inspected by the agent on macOS",
  },
  "wipe.work_paths": {
    outcome: "unsupported",
    how: "work paths are not erased on macOS in this version (the eraser walks folders through Linux's /proc/self/fd)",
  },
};
