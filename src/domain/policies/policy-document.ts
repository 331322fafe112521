/**
 * The policy document (`policy_data`): its complete stored form and the partial form clients send.
 * One TypeBox schema gives the static type, the OpenAPI description and the shape the validator walks.
 */
import { type Static, Type } from "@sinclair/typebox";

/** Limits on list and string sizes; SPEC.md leaves them open, these are Bulwark's. */
export const POLICY_LIMITS = {
  sensitiveDataPatterns: 100,
  patternLength: 500,
  domains: 1000,
  domainLength: 253,
  usbWhitelistEntries: 500,
  maxFileSizeMb: 1_048_576,
} as const;

/** Allowed values of `dlp.clipboard_direction`. */
export const CLIPBOARD_DIRECTIONS = ["none", "work_to_personal", "personal_to_work", "both"] as const;

/** USB device classes a policy can allow by class. */
export const USB_DEVICE_CLASSES = [
  "hid",
  "audio",
  "video",
  "mass_storage",
  "printer",
  "communications",
  "smart_card",
  "wireless",
  "hub",
  "imaging",
  "other",
] as const;

/** Data loss prevention settings. */
export const DlpSettingsSchema = Type.Object(
  {
    clipboard_sharing: Type.Boolean({ description: "Allow the clipboard between work and personal apps." }),
    clipboard_direction: Type.Union(
      CLIPBOARD_DIRECTIONS.map((direction) => Type.Literal(direction)),
      {
        description:
          "Direction the clipboard may flow; must be none when clipboard_sharing is false and not none when it is true.",
      },
    ),
    screenshot_allowed: Type.Boolean({ description: "Allow screenshots in the work profile." }),
    print_allowed: Type.Boolean({ description: "Allow printing from work apps." }),
    sensitive_data_patterns: Type.Array(
      Type.String({
        minLength: 1,
        maxLength: POLICY_LIMITS.patternLength,
        description: "A JavaScript regular expression without nested or overlapping quantified groups.",
      }),
      {
        maxItems: POLICY_LIMITS.sensitiveDataPatterns,
        uniqueItems: true,
        description: "Regular expressions that detect sensitive data.",
      },
    ),
  },
  { additionalProperties: false, description: "Data loss prevention settings." },
);

const DomainSchema = Type.String({
  minLength: 1,
  maxLength: POLICY_LIMITS.domainLength,
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
  { additionalProperties: false, description: "Network settings." },
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
    allowed_classes: Type.Array(
      Type.Union(
        USB_DEVICE_CLASSES.map((deviceClass) => Type.Literal(deviceClass)),
        { description: "A USB device class." },
      ),
      { maxItems: USB_DEVICE_CLASSES.length, uniqueItems: true, description: "USB device classes allowed." },
    ),
    audit_only: Type.Boolean({ description: "Log USB use but do not block it." }),
  },
  { additionalProperties: false, description: "USB device settings." },
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
  { additionalProperties: false, description: "Storage settings." },
);

/** The complete policy document, as stored with every policy version. */
export const PolicyDataSchema = Type.Object(
  {
    dlp: DlpSettingsSchema,
    network: NetworkSettingsSchema,
    usb: UsbSettingsSchema,
    storage: StorageSettingsSchema,
  },
  { additionalProperties: false, description: "Policy settings by section." },
);

/** A complete policy document. */
export type PolicyData = Static<typeof PolicyDataSchema>;
export type DlpSettings = Static<typeof DlpSettingsSchema>;
export type NetworkSettings = Static<typeof NetworkSettingsSchema>;
export type UsbSettings = Static<typeof UsbSettingsSchema>;
export type StorageSettings = Static<typeof StorageSettingsSchema>;
export type ClipboardDirection = DlpSettings["clipboard_direction"];
export type UsbDeviceClass = UsbSettings["allowed_classes"][number];

/** A partial policy document as sent by clients; omitted sections and settings take defaults. */
export const PolicyDataInputSchema = Type.Object(
  {
    dlp: Type.Optional(Type.Partial(DlpSettingsSchema)),
    network: Type.Optional(Type.Partial(NetworkSettingsSchema)),
    usb: Type.Optional(Type.Partial(UsbSettingsSchema)),
    storage: Type.Optional(Type.Partial(StorageSettingsSchema)),
  },
  {
    additionalProperties: false,
    description: "Policy settings by section; omitted sections and settings take their defaults.",
  },
);

/** A partial policy document as sent by clients. */
export type PolicyDataInput = Static<typeof PolicyDataInputSchema>;
