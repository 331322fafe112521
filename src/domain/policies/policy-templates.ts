import type { PolicyData } from "./policy-document";

/** Ids of the built-in templates. */
export type PolicyTemplateId = "strict" | "balanced" | "byod";

/** A ready-made policy document that organizations start from. */
export interface PolicyTemplate {
  id: PolicyTemplateId;
  name: string;
  description: string;
  recommended_for: string[];
  policy_data: PolicyData;
}

const CREDIT_CARD_NUMBER = String.raw`\b(?:\d[ -]?){12,18}\d\b`;
// RE2 has no lookahead, so the numbers never issued are left out by listing the ones that are: an area
// of 001-899 but 666, a group of 01-99, a serial of 0001-9999.
const SSN_AREA = String.raw`(?:00[1-9]|0[1-9]\d|[1-5]\d\d|6[0-57-9]\d|66[0-57-9]|[78]\d\d)`;
const SSN_GROUP = String.raw`(?:0[1-9]|[1-9]\d)`;
const SSN_SERIAL = String.raw`(?:000[1-9]|00[1-9]\d|0[1-9]\d\d|[1-9]\d{3})`;
const US_SOCIAL_SECURITY_NUMBER = String.raw`\b${SSN_AREA}-${SSN_GROUP}-${SSN_SERIAL}\b`;
const IBAN = String.raw`\b[A-Z]{2}\d{2}(?: ?[A-Z0-9]{4}){2,7}(?: ?[A-Z0-9]{1,3})?\b`;
const PRIVATE_KEY_BLOCK = "-----BEGIN (?:RSA |EC |DSA |OPENSSH )?PRIVATE KEY-----";
const AWS_ACCESS_KEY_ID = String.raw`\b(?:AKIA|ASIA)[0-9A-Z]{16}\b`;

// Paste and anonymous file-transfer sites, the usual way data leaves a managed device.
const FILE_SHARING_DOMAINS = [
  "pastebin.com",
  "*.pastebin.com",
  "transfer.sh",
  "wetransfer.com",
  "*.wetransfer.com",
  "file.io",
];

const STRICT: PolicyTemplate = {
  id: "strict",
  name: "Strict",
  description:
    "Maximum data protection: no clipboard, screenshots or printing, always-on VPN without split " +
    "tunneling, USB limited to keyboards and mice, no external storage or cloud sync.",
  recommended_for: ["regulated industries", "finance and healthcare", "devices handling customer data"],
  policy_data: {
    dlp: {
      clipboard_sharing: false,
      clipboard_direction: "none",
      screenshot_allowed: false,
      print_allowed: false,
      sensitive_data_patterns: [
        CREDIT_CARD_NUMBER,
        US_SOCIAL_SECURITY_NUMBER,
        IBAN,
        PRIVATE_KEY_BLOCK,
        AWS_ACCESS_KEY_ID,
      ],
    },
    network: {
      vpn_required: true,
      vpn_always_on: true,
      allowed_domains: [],
      blocked_domains: [...FILE_SHARING_DOMAINS],
      split_tunnel: false,
    },
    usb: { allowed: false, whitelist: [], allowed_classes: ["hid"], audit_only: false },
    storage: {
      encryption_required: true,
      external_storage_allowed: false,
      cloud_sync_allowed: false,
      max_file_size_mb: 10,
    },
    wipe: { work_paths: ["~/Work"] },
  },
};

const BALANCED: PolicyTemplate = {
  id: "balanced",
  name: "Balanced",
  description:
    "Protects work data without getting in the way: paste into work apps only, VPN required with split " +
    "tunneling, common peripherals allowed but not USB storage, cloud sync allowed.",
  recommended_for: ["company-owned laptops", "general office staff", "the default policy"],
  policy_data: {
    dlp: {
      clipboard_sharing: true,
      clipboard_direction: "personal_to_work",
      screenshot_allowed: true,
      print_allowed: true,
      sensitive_data_patterns: [CREDIT_CARD_NUMBER, US_SOCIAL_SECURITY_NUMBER, PRIVATE_KEY_BLOCK],
    },
    network: {
      vpn_required: true,
      vpn_always_on: false,
      allowed_domains: [],
      blocked_domains: [...FILE_SHARING_DOMAINS],
      split_tunnel: true,
    },
    usb: {
      allowed: false,
      whitelist: [],
      allowed_classes: ["hid", "audio", "video", "printer", "smart_card", "hub"],
      audit_only: false,
    },
    storage: {
      encryption_required: true,
      external_storage_allowed: false,
      cloud_sync_allowed: true,
      max_file_size_mb: 100,
    },
    wipe: { work_paths: ["~/Work"] },
  },
};

const BYOD: PolicyTemplate = {
  id: "byod",
  name: "Bring your own device",
  description:
    "For personally owned devices: no content scanning, domain filtering or USB logging, so personal use " +
    "stays private; only disk encryption is enforced to protect work data at rest.",
  recommended_for: ["personally owned devices", "contractors", "occasional remote access"],
  policy_data: {
    dlp: {
      clipboard_sharing: true,
      clipboard_direction: "both",
      screenshot_allowed: true,
      print_allowed: true,
      sensitive_data_patterns: [],
    },
    network: {
      vpn_required: false,
      vpn_always_on: false,
      allowed_domains: [],
      blocked_domains: [],
      split_tunnel: true,
    },
    usb: { allowed: true, whitelist: [], allowed_classes: [], audit_only: false },
    storage: {
      encryption_required: true,
      external_storage_allowed: true,
      cloud_sync_allowed: true,
      max_file_size_mb: 1024,
    },
    wipe: { work_paths: ["~/Work"] },
  },
};

/** The built-in templates, in the order they are listed; deep-frozen. */
export const POLICY_TEMPLATES: readonly PolicyTemplate[] = deepFreeze([STRICT, BALANCED, BYOD]);

/** The defaults for omitted settings (the balanced template's document); deep-frozen, clone to change. */
export const DEFAULT_POLICY_DATA: PolicyData = BALANCED.policy_data;

/** Returns the template with this id, or undefined. */
export function findPolicyTemplate(id: string): PolicyTemplate | undefined {
  return POLICY_TEMPLATES.find((template) => template.id === id);
}

function deepFreeze<T>(value: T): T {
  if (typeof value === "object" && value !== null) {
    for (const item of Object.values(value)) deepFreeze(item);
    Object.freeze(value);
  }
  return value;
}
