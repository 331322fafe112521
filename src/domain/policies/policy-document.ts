/**
 * The policy document (`policy_data`): its complete stored form and the partial form clients send.
 * One TypeBox schema gives the static type, the OpenAPI description and the shape the validator walks.
 */
import { type Static, Type } from "@sinclair/typebox";
import { MAX_RE2_PROGRAM_SIZE } from "../../lib/re2-pattern";

/** Limits on list and string sizes; Bulwark's own, stated in the OpenAPI document's schemas. */
export const POLICY_LIMITS = {
  sensitiveDataPatterns: 100,
  patternLength: 500,
  domains: 1000,
  domainLength: 253,
  usbWhitelistEntries: 500,
  workPaths: 100,
  workPathLength: 1024,
  maxFileSizeMb: 1_048_576,
} as const;

// The unions are written out literally: a union built with `.map()` loses its literal types, and with
// them the typing of every route handler that returns a policy document.
const ClipboardDirectionSchema = Type.Union(
  [
    Type.Literal("none"),
    Type.Literal("work_to_personal"),
    Type.Literal("personal_to_work"),
    Type.Literal("both"),
  ],
  {
    description:
      "Direction the clipboard may flow; must be none when clipboard_sharing is false and not none when it is true.",
  },
);

const UsbDeviceClassSchema = Type.Union(
  [
    Type.Literal("hid"),
    Type.Literal("audio"),
    Type.Literal("video"),
    Type.Literal("mass_storage"),
    Type.Literal("printer"),
    Type.Literal("communications"),
    Type.Literal("smart_card"),
    Type.Literal("wireless"),
    Type.Literal("hub"),
    Type.Literal("imaging"),
    Type.Literal("other"),
  ],
  { description: "A USB device class." },
);

/** Allowed values of `dlp.clipboard_direction`. */
export const CLIPBOARD_DIRECTIONS = ClipboardDirectionSchema.anyOf.map((literal) => literal.const);

/** USB device classes a policy can allow by class. */
export const USB_DEVICE_CLASSES = UsbDeviceClassSchema.anyOf.map((literal) => literal.const);

/** Data loss prevention settings. */
export const DlpSettingsSchema = Type.Object(
  {
    clipboard_sharing: Type.Boolean({
      description:
        "Allow the clipboard between work and personal apps; when false, clipboard_direction must be none, when true it must not be.",
    }),
    clipboard_direction: ClipboardDirectionSchema,
    screenshot_allowed: Type.Boolean({ description: "Allow screenshots in the work profile." }),
    print_allowed: Type.Boolean({ description: "Allow printing from work apps." }),
    sensitive_data_patterns: Type.Array(
      Type.String({
        minLength: 1,
        maxLength: POLICY_LIMITS.patternLength,
        description:
          "A regular expression in RE2 syntax (https://github.com/google/re2/wiki/Syntax), compiling to at most " +
          `${MAX_RE2_PROGRAM_SIZE} RE2 instructions. Devices match it on a linear-time engine, so lookaround, ` +
          "backreferences and the other constructs that need backtracking are refused.",
      }),
      {
        maxItems: POLICY_LIMITS.sensitiveDataPatterns,
        uniqueItems: true,
        description: "Regular expressions that detect sensitive data.",
      },
    ),
  },
  { title: "DlpSettings", additionalProperties: false, description: "Data loss prevention settings." },
);

/** A host name of two labels or more (the last not all digits), optionally behind `*.`; any case. */
export const DOMAIN_PATTERN =
  "^(\\*\\.)?([A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?\\.)+(?![0-9]+$)[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?$";

const DomainSchema = Type.String({
  minLength: 1,
  maxLength: POLICY_LIMITS.domainLength,
  pattern: DOMAIN_PATTERN,
  description: "A host name such as example.com, or *.example.com for every subdomain.",
});

/** Network settings. */
export const NetworkSettingsSchema = Type.Object(
  {
    vpn_required: Type.Boolean({ description: "Require the VPN for all traffic." }),
    vpn_always_on: Type.Boolean({ description: "Block traffic while the VPN is disconnected." }),
    allowed_domains: Type.Array(DomainSchema, {
      maxItems: POLICY_LIMITS.domains,
      uniqueItems: true,
      description: "Allowed domains; a *. prefix covers every subdomain.",
    }),
    blocked_domains: Type.Array(DomainSchema, {
      maxItems: POLICY_LIMITS.domains,
      uniqueItems: true,
      description: "Blocked domains; a *. prefix covers every subdomain. No domain may also be allowed.",
    }),
    split_tunnel: Type.Boolean({ description: "Allow split tunneling." }),
  },
  { title: "NetworkSettings", additionalProperties: false, description: "Network settings." },
);

/** USB device settings. */
export const UsbSettingsSchema = Type.Object(
  {
    allowed: Type.Boolean({ description: "Allow any USB device." }),
    whitelist: Type.Array(
      Type.String({
        pattern: "^[0-9a-fA-F]{4}:[0-9a-fA-F]{4}$",
        description: "A vendor:product identifier, four hex digits each, e.g. 046d:c52b.",
      }),
      {
        maxItems: POLICY_LIMITS.usbWhitelistEntries,
        uniqueItems: true,
        description: "USB devices allowed by vendor:product identifier.",
      },
    ),
    allowed_classes: Type.Array(UsbDeviceClassSchema, {
      maxItems: USB_DEVICE_CLASSES.length,
      uniqueItems: true,
      description: "USB device classes allowed.",
    }),
    audit_only: Type.Boolean({ description: "Log USB use but do not block it." }),
  },
  { title: "UsbSettings", additionalProperties: false, description: "USB device settings." },
);

/** Storage settings. */
export const StorageSettingsSchema = Type.Object(
  {
    encryption_required: Type.Boolean({ description: "Require disk encryption." }),
    external_storage_allowed: Type.Boolean({ description: "Allow access to external storage." }),
    cloud_sync_allowed: Type.Boolean({ description: "Allow cloud storage sync." }),
    max_file_size_mb: Type.Integer({
      minimum: 0,
      maximum: POLICY_LIMITS.maxFileSizeMb,
      description: "Largest file that may be transferred, in megabytes.",
    }),
  },
  { title: "StorageSettings", additionalProperties: false, description: "Storage settings." },
);

/** What a wipe erases on a device. */
export const WipeSettingsSchema = Type.Object(
  {
    work_paths: Type.Array(
      Type.String({
        minLength: 2,
        maxLength: POLICY_LIMITS.workPathLength,
        description:
          "An absolute path (/srv/work) or one in each local user's home (~/Work, ~/.config/Slack); a " +
          "component may be a glob (*, ?, [...]) such as ~/.mozilla/firefox/*.work. A folder is emptied, a " +
          "file deleted; symbolic links are removed, never followed, and other mounts are left alone. " +
          "System folders (/etc, /usr, /boot, ...) are refused.",
      }),
      {
        maxItems: POLICY_LIMITS.workPaths,
        uniqueItems: true,
        description:
          "The work profile on Linux: what a wipe erases. Empty: a wipe erases no files (it still undoes " +
          "the enforcement, takes the tunnel down and deletes the device's identity), and says so.",
      },
    ),
  },
  {
    title: "WipeSettings",
    additionalProperties: false,
    description:
      "What a wipe erases on a device. Absent only from versions saved before the section existed, which " +
      "name no work paths.",
  },
);

/** The complete policy document, as stored with every policy version. */
export const PolicyDataSchema = Type.Object(
  {
    dlp: DlpSettingsSchema,
    network: NetworkSettingsSchema,
    usb: UsbSettingsSchema,
    storage: StorageSettingsSchema,
    wipe: Type.Optional(WipeSettingsSchema),
  },
  { title: "PolicyData", additionalProperties: false, description: "Policy settings by section." },
);

/** A complete policy document. */
export type PolicyData = Static<typeof PolicyDataSchema>;
export type DlpSettings = Static<typeof DlpSettingsSchema>;
export type NetworkSettings = Static<typeof NetworkSettingsSchema>;
export type UsbSettings = Static<typeof UsbSettingsSchema>;
export type StorageSettings = Static<typeof StorageSettingsSchema>;
export type WipeSettings = Static<typeof WipeSettingsSchema>;
export type ClipboardDirection = DlpSettings["clipboard_direction"];
export type UsbDeviceClass = UsbSettings["allowed_classes"][number];

/** A partial policy document as sent by clients; omitted sections and settings take defaults. */
export const PolicyDataInputSchema = Type.Object(
  {
    dlp: Type.Optional(Type.Partial(DlpSettingsSchema)),
    network: Type.Optional(Type.Partial(NetworkSettingsSchema)),
    usb: Type.Optional(Type.Partial(UsbSettingsSchema)),
    storage: Type.Optional(Type.Partial(StorageSettingsSchema)),
    wipe: Type.Optional(Type.Partial(WipeSettingsSchema)),
  },
  {
    additionalProperties: false,
    description: "Policy settings by section; omitted sections and settings take their defaults.",
  },
);

/** A partial policy document as sent by clients. */
export type PolicyDataInput = Static<typeof PolicyDataInputSchema>;
