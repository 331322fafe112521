import type { PolicyData } from "../../domain/policies/policy-document";

/** A policy setting's name as the enforcement report gives it: `section.key`. */
export type PolicySettingName = {
  [Section in keyof PolicyData]-?: `${Section}${"."}${keyof NonNullable<PolicyData[Section]> & string}`;
}[keyof PolicyData];

/**
 * Every setting of the policy document, in the document's order. Written out by hand (the agent loads no
 * schema at run time); test/agent/enforce/settings.test.ts holds it to the schema's keys, and the planner's
 * table is typed by it, so a new setting cannot be left without an outcome.
 */
export const POLICY_SETTINGS = [
  "dlp.clipboard_sharing",
  "dlp.clipboard_direction",
  "dlp.screenshot_allowed",
  "dlp.print_allowed",
  "dlp.sensitive_data_patterns",
  "network.vpn_required",
  "network.vpn_always_on",
  "network.allowed_domains",
  "network.blocked_domains",
  "network.split_tunnel",
  "usb.allowed",
  "usb.whitelist",
  "usb.allowed_classes",
  "usb.audit_only",
  "storage.encryption_required",
  "storage.external_storage_allowed",
  "storage.cloud_sync_allowed",
  "storage.max_file_size_mb",
  "wipe.work_paths",
] as const satisfies readonly PolicySettingName[];

/** The tunnel is reported beside the policy settings: it follows the server's VPN settings, not the policy. */
export const TUNNEL_SETTING = "tunnel";

/** The files the agent writes, as paths under ROOT. */
export const MANAGED_FILES = {
  modprobe: "/etc/modprobe.d/bulwark.conf",
  usbguard: "/etc/usbguard/rules.d/50-bulwark.conf",
  hosts: "/etc/hosts",
  wireguard: "/etc/wireguard/bulwark.conf",
} as const;

/** The WireGuard interface wg-quick makes from MANAGED_FILES.wireguard (named after the file). */
export const TUNNEL_INTERFACE = "bulwark";

/**
 * Where the running kernel lists its network interfaces. wg-quick brings the tunnel up in the kernel the
 * agent runs on, whatever --root is, so its interface is looked for here and not under ROOT.
 */
export const LIVE_INTERFACES = "/sys/class/net";
