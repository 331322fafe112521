/**
 * What a phone managed through its VPN profile (iOS) or QR code (Android) does with each policy setting,
 * in the same form as the agents' table (platform-support.ts): the console's policy editor and device
 * page show it, the profile builder (src/domain/devices/phone-profile.ts) follows it, and docs/phones.md
 * explains it. No agent runs on such a phone and nothing on it reports back: "enforced" here means the
 * installed profile carries the setting, which the phone applies while the profile stays installed (the
 * user can remove a profile installed by hand). Imports nothing at run time (bundled into the console).
 */
import type { SettingSupport } from "./platform-support";
import type { PolicySettingName } from "./settings";

const NO_MDM =
  "needs Apple's MDM channel (a push certificate) or a supervised iPhone, which a profile installed by hand is not";
const NO_OWNER = "needs a device-owner app, which a phone enrolled by QR code does not have";
const NO_USB_POLICY = "phones have no USB device policy a profile or the WireGuard app can set";
const NO_WIPE =
  "no remote wipe without an MDM channel: suspend the device to cut its tunnel, and ask the user to remove the profile";

/** An iPhone or iPad (iOS 15+) with Bulwark's configuration profile installed by hand, setting by setting. */
export const IOS_SUPPORT: Record<PolicySettingName, SettingSupport> = {
  "dlp.clipboard_sharing": { outcome: "unsupported", how: `the clipboard between apps ${NO_MDM}` },
  "dlp.clipboard_direction": { outcome: "unsupported", how: `the clipboard's direction ${NO_MDM}` },
  "dlp.screenshot_allowed": {
    outcome: "enforced",
    how: "the profile's restrictions payload (allowScreenShot false) stops screenshots and screen recording while the profile is installed",
  },
  "dlp.print_allowed": { outcome: "unsupported", how: `printing ${NO_MDM}` },
  "dlp.sensitive_data_patterns": { outcome: "unsupported", how: "nothing inspects content on a phone" },
  "network.vpn_required": {
    outcome: "enforced",
    how: "when the server made the key, the profile installs the tunnel for the WireGuard app (VPNSubType com.wireguard.ios) with Connect On Demand on; when the phone made its key, the user adds the tunnel in the app and nothing enforces it. Whether it is up is known only from its handshake, which `bulwark vpn sync` reports",
  },
  "network.vpn_always_on": {
    outcome: "enforced",
    how: "Connect On Demand (always connect) in the VPN payload, its switch in Settings locked (OnDemandUserOverrideDisabled), when the server made the key; traffic is not blocked while the tunnel is down (an always-on VPN needs a supervised iPhone), and the user can still remove the profile",
  },
  "network.allowed_domains": {
    outcome: "unsupported",
    how: `allowing only some domains needs a content filter, which ${NO_MDM}`,
  },
  "network.blocked_domains": {
    outcome: "unsupported",
    how: `blocking domains needs a content filter, which ${NO_MDM}`,
  },
  "network.split_tunnel": {
    outcome: "reported",
    how: "the server's VPN settings (AllowedIPs in the profile's tunnel) decide what the tunnel carries",
  },
  "usb.allowed": { outcome: "unsupported", how: NO_USB_POLICY },
  "usb.whitelist": { outcome: "unsupported", how: NO_USB_POLICY },
  "usb.allowed_classes": { outcome: "unsupported", how: NO_USB_POLICY },
  "usb.audit_only": { outcome: "unsupported", how: NO_USB_POLICY },
  "storage.encryption_required": {
    outcome: "enforced",
    how: "the profile's passcode payload requires a passcode (6 characters or more, no simple ones): an iPhone's data protection encrypts with it, and the user is asked to set one when the profile is installed",
  },
  "storage.external_storage_allowed": {
    outcome: "unsupported",
    how: `USB drives in the Files app (allowFilesUSBDriveAccess) ${NO_MDM}`,
  },
  "storage.cloud_sync_allowed": {
    outcome: "unsupported",
    how: `iCloud document sync (allowCloudDocumentSync) ${NO_MDM}`,
  },
  "storage.max_file_size_mb": { outcome: "unsupported", how: "nothing inspects files on a phone" },
  "wipe.work_paths": { outcome: "unsupported", how: NO_WIPE },
};

/** An Android phone (10+) whose WireGuard app scanned the device's QR code, setting by setting. */
export const ANDROID_SUPPORT: Record<PolicySettingName, SettingSupport> = {
  "dlp.clipboard_sharing": { outcome: "unsupported", how: `the clipboard ${NO_OWNER}` },
  "dlp.clipboard_direction": { outcome: "unsupported", how: `the clipboard ${NO_OWNER}` },
  "dlp.screenshot_allowed": { outcome: "unsupported", how: `blocking screenshots ${NO_OWNER}` },
  "dlp.print_allowed": { outcome: "unsupported", how: `printing ${NO_OWNER}` },
  "dlp.sensitive_data_patterns": { outcome: "unsupported", how: "nothing inspects content on a phone" },
  "network.vpn_required": {
    outcome: "reported",
    how: "the WireGuard app holds the tunnel from the QR code; it is up while the user keeps it up, and nothing reports it unless `bulwark vpn sync` sees its handshake",
  },
  "network.vpn_always_on": {
    outcome: "unsupported",
    how: `Always-on VPN and Block connections without VPN are the user's settings (Settings, Network, VPN); setting them ${NO_OWNER}`,
  },
  "network.allowed_domains": { outcome: "unsupported", how: `filtering domains ${NO_OWNER}` },
  "network.blocked_domains": { outcome: "unsupported", how: `filtering domains ${NO_OWNER}` },
  "network.split_tunnel": {
    outcome: "reported",
    how: "the server's VPN settings (AllowedIPs in the QR code's tunnel) decide what the tunnel carries",
  },
  "usb.allowed": { outcome: "unsupported", how: NO_USB_POLICY },
  "usb.whitelist": { outcome: "unsupported", how: NO_USB_POLICY },
  "usb.allowed_classes": { outcome: "unsupported", how: NO_USB_POLICY },
  "usb.audit_only": { outcome: "unsupported", how: NO_USB_POLICY },
  "storage.encryption_required": {
    outcome: "unsupported",
    how: `requiring a screen lock ${NO_OWNER}; Android 10 and later encrypt from the factory, but nothing reports it`,
  },
  "storage.external_storage_allowed": { outcome: "unsupported", how: `USB storage ${NO_OWNER}` },
  "storage.cloud_sync_allowed": { outcome: "unsupported", how: `cloud sync ${NO_OWNER}` },
  "storage.max_file_size_mb": { outcome: "unsupported", how: "nothing inspects files on a phone" },
  "wipe.work_paths": {
    outcome: "unsupported",
    how: "no remote wipe without a device-owner app: suspend the device to cut its tunnel",
  },
};
