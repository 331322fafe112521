import {
  describeFact,
  type MachineState,
  type PlanInput,
  type Planned,
  planEach,
  planHostsSection,
  planned,
  planSplitTunnel,
  reportFromFactsWith,
  type SettingPlan,
  wholeFileChanges,
} from "../enforce/plan";
import { MACOS_SUPPORT } from "../enforce/platform-support";
import { renderWireGuardConf, vpnSettingsProblem } from "../enforce/render-wireguard";
import type { PolicySettingName } from "../enforce/settings";
import { type ProfileState, renderRestrictionsProfile } from "./profile";
import {
  MACOS_FILES,
  PROFILE_IDENTIFIER,
  TUNNEL_NAME,
  TUNNEL_NAME_FILE,
  wireguardConfPath,
} from "./settings";

/** What is done with the restrictions profile after its file is written: opened for approval, or removed. */
export type ProfileAction = "open" | "remove";

/** A macOS setting's plan: a Linux one, and what is done with the restrictions profile. */
export interface MacosSettingPlan extends SettingPlan {
  profile?: ProfileAction;
}

/** What a Mac holds now, as the planner needs it. */
export interface MacosMachineState extends MachineState {
  /** The Homebrew prefix whose bin/ has wg-quick, or null when wireguard-tools is not installed. */
  homebrewPrefix: string | null;
  /** Whether the restrictions profile is installed (`profiles show`), or why that cannot be told. */
  profile: ProfileState;
  /** Whether the restrictions profile was last opened for approval long enough ago to open it again. */
  isReminderDue: boolean;
}

export interface MacosPlanInput extends PlanInput {
  machine: MacosMachineState;
  stateDir: string;
}

type MacosPlanned = Planned & { profile?: ProfileAction };

function unsupported(setting: PolicySettingName): (input: MacosPlanInput) => Planned {
  return () => planned("unsupported", MACOS_SUPPORT[setting].how);
}

function planEncryption({ policy, facts }: MacosPlanInput): Planned {
  const fact = describeFact("disk_encrypted", facts.disk_encrypted, "whether FileVault is on");
  if (!policy.storage.encryption_required) return planned("reported", `not required (${fact})`);
  if (facts.disk_encrypted === false)
    return planned(
      "reported",
      `required, but ${fact}: turn FileVault on (System Settings > Privacy & Security > FileVault); the agent does not turn it on`,
    );
  return planned("reported", `required; ${fact}`);
}

function planVpnRequired({ policy, facts }: MacosPlanInput): Planned {
  const fact = describeFact("vpn_connected", facts.vpn_connected, `whether the ${TUNNEL_NAME} tunnel is up`);
  if (!policy.network.vpn_required) return planned("reported", `not required (${fact})`);
  if (facts.vpn_connected === false)
    return planned(
      "reported",
      `required, but ${fact}: no handshake on the ${TUNNEL_NAME} tunnel in the last 180 s`,
    );
  return planned("reported", `required; ${fact}`);
}

function planBlockedDomains(input: MacosPlanInput): Planned {
  const plan = planHostsSection(input, MACOS_FILES.hosts);
  if (plan.changes.length === 0) return plan;
  return { ...plan, detail: `${plan.detail}; the resolver's cache is flushed (dscacheutil, mDNSResponder)` };
}

/**
 * `dlp.screenshot_allowed = false`: the restrictions profile written (0644, for the user to open) and
 * opened in System Settings for approval; `pending_approval` until `profiles` lists it installed, then
 * `enforced`. Allowed again: the file goes and the installed profile is removed.
 */
function planScreenshots(input: MacosPlanInput): MacosPlanned {
  const { policy, machine, stateDir } = input;
  const path = MACOS_FILES.profile;
  const state = machine.profile;
  if (policy.dlp.screenshot_allowed) {
    const changes = wholeFileChanges(input, path, null, 0);
    const installed = "installed" in state && state.installed;
    return {
      ...planned(
        "enforced",
        `screenshots allowed: no restrictions profile${installed ? ` (${PROFILE_IDENTIFIER} is removed)` : ""}`,
        changes,
      ),
      ...(installed ? { profile: "remove" as const } : {}),
    };
  }
  const changes = wholeFileChanges(input, path, renderRestrictionsProfile(stateDir), 0o644);
  if ("problem" in state)
    return planned(
      "failed",
      `cannot tell whether the restrictions profile is installed: ${state.problem}`,
      changes,
    );
  if (state.installed)
    return planned(
      "enforced",
      `the restrictions profile ${PROFILE_IDENTIFIER} (allowScreenShot false) is installed: screenshots and screen recording are not allowed`,
      changes,
    );
  const open = changes.length > 0 || machine.isReminderDue;
  return {
    ...planned(
      "pending_approval",
      `${path} (${PROFILE_IDENTIFIER}, allowScreenShot false) waits for the person at the Mac to approve it in System Settings > Privacy & Security > Profiles (macOS does not let a program install it silently)${open ? "; it is opened for them now" : ""}`,
      changes,
    ),
    ...(open ? { profile: "open" as const } : {}),
  };
}

function planWorkPaths(input: MacosPlanInput): Planned {
  const paths = input.policy.wipe?.work_paths ?? [];
  if (paths.length === 0)
    return planned("reported", "the policy names no work paths: a wipe erases no files");
  return planned("unsupported", MACOS_SUPPORT["wipe.work_paths"].how);
}

function planTunnel(input: MacosPlanInput): Planned {
  const { vpn, machine, options } = input;
  const prefix = machine.homebrewPrefix;
  if (vpn === null || vpn.address === "") {
    // Whichever prefix's file the agent wrote before goes (the journal knows it).
    const changes = machine.journal.files
      .filter((entry) => entry.path.endsWith(`/etc/wireguard/${TUNNEL_NAME}.conf`))
      .flatMap((entry) => wholeFileChanges(input, entry.path, null, 0));
    const down = machine.tunnel === "ours" && !options.noTunnel && prefix !== null;
    return {
      ...planned(
        "reported",
        `the server gave this device no VPN address: no tunnel${down ? " (brought down)" : ""}`,
        changes,
      ),
      tunnel: down ? ["down"] : [],
    };
  }
  if (prefix === null)
    return planned(
      "failed",
      "wg-quick is not installed (neither /opt/homebrew/bin/wg-quick nor /usr/local/bin/wg-quick): install it with brew install wireguard-tools",
    );
  if (options.wireGuardPrivateKey === null)
    return planned("failed", "the device's WireGuard private key (wg.key in the state folder) is missing");
  const problem = vpnSettingsProblem(vpn, options.wireGuardPrivateKey);
  if (problem !== null) return planned("failed", `the server's VPN settings cannot be written: ${problem}`);
  const path = wireguardConfPath(prefix);
  const changes = wholeFileChanges(input, path, renderWireGuardConf(vpn, options.wireGuardPrivateKey), 0o600);
  const target = `${TUNNEL_NAME} to ${vpn.endpoint} as ${vpn.address}`;
  const other = `a ${TUNNEL_NAME} tunnel is up (${TUNNEL_NAME_FILE}) that this agent did not bring up`;
  if (options.noTunnel)
    return planned(
      "enforced",
      `${path} written for ${target}; ${machine.tunnel === "absent" ? "not brought up" : "left as it is"} (--no-tunnel)`,
      changes,
    );
  if (machine.tunnel === "other")
    return planned("failed", `${target} is not brought up: ${other}; it is left alone`);
  const isUp = machine.tunnel === "ours";
  if (changes.length === 0 && isUp) return planned("enforced", `${target}: up, settings unchanged`);
  return {
    outcome: "enforced",
    detail: `${target}: ${isUp ? "restarted with its new settings (wg-quick down, up)" : "brought up (wg-quick up)"}`,
    changes,
    tunnel: isUp ? ["down", "up"] : ["up"],
  };
}

const PLANNERS: Record<PolicySettingName, (input: MacosPlanInput) => Planned> = {
  "dlp.clipboard_sharing": unsupported("dlp.clipboard_sharing"),
  "dlp.clipboard_direction": unsupported("dlp.clipboard_direction"),
  "dlp.screenshot_allowed": planScreenshots,
  "dlp.print_allowed": unsupported("dlp.print_allowed"),
  "dlp.sensitive_data_patterns": unsupported("dlp.sensitive_data_patterns"),
  "network.vpn_required": planVpnRequired,
  "network.vpn_always_on": unsupported("network.vpn_always_on"),
  "network.allowed_domains": unsupported("network.allowed_domains"),
  "network.blocked_domains": planBlockedDomains,
  "network.split_tunnel": planSplitTunnel,
  "usb.allowed": unsupported("usb.allowed"),
  "usb.whitelist": unsupported("usb.whitelist"),
  "usb.allowed_classes": unsupported("usb.allowed_classes"),
  "usb.audit_only": unsupported("usb.audit_only"),
  "storage.encryption_required": planEncryption,
  "storage.external_storage_allowed": unsupported("storage.external_storage_allowed"),
  "storage.cloud_sync_allowed": unsupported("storage.cloud_sync_allowed"),
  "storage.max_file_size_mb": unsupported("storage.max_file_size_mb"),
  "wipe.work_paths": planWorkPaths,
};

/** Each policy setting's plan on a Mac, in the document's order, then the tunnel's. */
export function planMacosEnforcement(input: MacosPlanInput): MacosSettingPlan[] {
  return planEach(input, PLANNERS, planTunnel);
}

/** The settings read from the facts, planned again after enforcement (as on Linux). */
export const macosReportFromFacts = reportFromFactsWith<MacosPlanInput>({
  "storage.encryption_required": planEncryption,
  "network.vpn_required": planVpnRequired,
});
