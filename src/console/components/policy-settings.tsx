import { Fragment } from "preact";
import { useId } from "preact/hooks";
import type { Schemas } from "../api/client";
import { formatNumber } from "../lib/format";

export type PolicyData = Schemas["PolicyData"];
type SectionKey = keyof PolicyData;

/** How a setting is edited: a checkbox, a select, a textarea of one item per line, or a whole number. */
type SettingKind = "boolean" | "select" | "list" | "number";

export interface SettingDefinition {
  /** "dlp.clipboard_sharing": the setting's path inside policy_data, as history lines and errors name it. */
  path: string;
  section: SectionKey;
  key: string;
  kind: SettingKind;
  label: string;
  /** What the setting means, shown under its control. */
  hint: string;
  options?: { value: string; label: string }[];
}

export interface SectionDefinition {
  key: SectionKey;
  title: string;
  description: string;
  settings: SettingDefinition[];
}

const CLIPBOARD_DIRECTIONS = [
  { value: "none", label: "None" },
  { value: "work_to_personal", label: "Work to personal only" },
  { value: "personal_to_work", label: "Personal to work only" },
  { value: "both", label: "Both ways" },
];

function section(
  key: SectionKey,
  title: string,
  description: string,
  settings: Omit<SettingDefinition, "path" | "section">[],
): SectionDefinition {
  return {
    key,
    title,
    description,
    settings: settings.map((setting) => ({ ...setting, section: key, path: `${key}.${setting.key}` })),
  };
}

/** The sections of a policy and every setting in them, in the order docs/policies.md lists them. */
export const POLICY_SECTIONS: SectionDefinition[] = [
  section(
    "dlp",
    "Data loss prevention",
    "What may leave the work profile, and how sensitive data is found.",
    [
      {
        key: "clipboard_sharing",
        kind: "boolean",
        label: "Clipboard sharing",
        hint: "Copy and paste between work and personal apps. Turning it off sets the direction to None.",
      },
      {
        key: "clipboard_direction",
        kind: "select",
        label: "Clipboard direction",
        hint: "Which way copied content may flow while clipboard sharing is on; None when it is off.",
        options: CLIPBOARD_DIRECTIONS,
      },
      {
        key: "screenshot_allowed",
        kind: "boolean",
        label: "Screenshots allowed",
        hint: "Screenshots and screen recordings in the work profile.",
      },
      { key: "print_allowed", kind: "boolean", label: "Printing allowed", hint: "Printing from work apps." },
      {
        key: "sensitive_data_patterns",
        kind: "list",
        label: "Sensitive data patterns",
        hint: "Regular expressions in RE2 syntax (no lookaround or backreferences: devices match in linear time) that detect sensitive data, one per line, e.g. \\b(?:AKIA|ASIA)[0-9A-Z]{16}\\b for AWS access keys.",
      },
    ],
  ),
  section("network", "Network", "The VPN and which domains devices may reach.", [
    {
      key: "vpn_required",
      kind: "boolean",
      label: "VPN required",
      hint: "All traffic goes through the VPN.",
    },
    {
      key: "vpn_always_on",
      kind: "boolean",
      label: "Always-on VPN",
      hint: "Traffic is blocked whenever the VPN is disconnected.",
    },
    {
      key: "allowed_domains",
      kind: "list",
      label: "Allowed domains",
      hint: "Domains devices may reach, one per line: example.com, or *.example.com for all its subdomains.",
    },
    {
      key: "blocked_domains",
      kind: "list",
      label: "Blocked domains",
      hint: "Domains devices may not reach, one per line, written the same way. A domain can't be both allowed and blocked.",
    },
    {
      key: "split_tunnel",
      kind: "boolean",
      label: "Split tunneling",
      hint: "Traffic that is not for the work network may bypass the VPN.",
    },
  ]),
  section("usb", "USB", "Which USB devices can be used.", [
    {
      key: "allowed",
      kind: "boolean",
      label: "Any USB device allowed",
      hint: "When off, only the devices and classes listed below may be used.",
    },
    {
      key: "whitelist",
      kind: "list",
      label: "Allowed USB devices",
      hint: "vendor:product identifiers, four hex digits each, one per line, e.g. 046d:c52b.",
    },
    {
      key: "allowed_classes",
      kind: "list",
      label: "Allowed USB device classes",
      hint: "One per line, from: hid (keyboards and mice), audio, video, mass_storage, printer, communications, smart_card, wireless, hub, imaging, other.",
    },
    {
      key: "audit_only",
      kind: "boolean",
      label: "Audit only",
      hint: "USB use is logged but nothing is blocked.",
    },
  ]),
  section("storage", "Storage", "Disk encryption, external storage, cloud sync and file transfers.", [
    {
      key: "encryption_required",
      kind: "boolean",
      label: "Disk encryption required",
      hint: "A device without disk encryption is non-compliant.",
    },
    {
      key: "external_storage_allowed",
      kind: "boolean",
      label: "External storage allowed",
      hint: "Access to USB drives, memory cards and other external storage.",
    },
    {
      key: "cloud_sync_allowed",
      kind: "boolean",
      label: "Cloud sync allowed",
      hint: "Syncing work files with cloud storage services.",
    },
    {
      key: "max_file_size_mb",
      kind: "number",
      label: "Largest file transfer (MB)",
      hint: "The largest file that may be transferred, in megabytes: a whole number from 0 to 1,048,576.",
    },
  ]),
  section("wipe", "Wipe", "What a wipe erases on a device: the work profile.", [
    {
      key: "work_paths",
      kind: "list",
      label: "Work paths",
      hint:
        "One per line: ~/Work (in each local user's home), /srv/projects/*/private; a * or ? matches within " +
        "one folder level. A folder is emptied, a file deleted. System folders are refused.",
    },
  ]),
];

/** Every setting, by its path ("usb.whitelist"). */
export const SETTINGS_BY_PATH = new Map(
  POLICY_SECTIONS.flatMap((part) => part.settings.map((setting) => [setting.path, setting] as const)),
);

/** A setting's value in a document. */
export function readSetting(data: PolicyData, setting: SettingDefinition): unknown {
  // A version saved before a section existed (wipe) has none: its settings read as absent.
  return (data[setting.section] as Record<string, unknown> | undefined)?.[setting.key];
}

function SettingValue({ setting, value }: { setting: SettingDefinition; value: unknown }) {
  if (setting.kind === "boolean") return <>{value ? "Yes" : "No"}</>;
  if (setting.kind === "select") {
    return <>{setting.options?.find((option) => option.value === value)?.label ?? String(value)}</>;
  }
  if (setting.kind === "number") return <>{typeof value === "number" ? `${formatNumber(value)} MB` : "—"}</>;
  const items = Array.isArray(value) ? (value as unknown[]) : [];
  if (items.length === 0) return <span class="muted">None</span>;
  return (
    <ul class="plain-list">
      {items.map((item) => (
        <li key={String(item)} class="code">
          {String(item)}
        </li>
      ))}
    </ul>
  );
}

/** A policy document in words: each section with its settings, under h3 headings. */
export function PolicySettingsView({ data }: { data: PolicyData }) {
  // The page and a version's dialog may show two documents at once: their heading ids must differ.
  const id = useId();
  return (
    <div class="stack">
      {POLICY_SECTIONS.map((part) => (
        <section key={part.key} aria-labelledby={`${id}-${part.key}`}>
          <h3 id={`${id}-${part.key}`}>{part.title}</h3>
          <dl class="details">
            {part.settings.map((setting) => (
              <Fragment key={setting.path}>
                <dt>{setting.label}</dt>
                <dd>
                  <SettingValue setting={setting} value={readSetting(data, setting)} />
                </dd>
              </Fragment>
            ))}
          </dl>
        </section>
      ))}
    </div>
  );
}
