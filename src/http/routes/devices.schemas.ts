import { Type } from "@sinclair/typebox";
import {
  DeviceListItemSchema,
  DeviceSchema,
  DeviceStatusSchema,
  PlatformSchema,
} from "../../domain/devices/device-views";
import { ComplianceStatusSchema } from "../../domain/devices/evaluate-compliance";
import { DevicePolicySchema } from "../../domain/devices/get-device-policy";
import { DeviceLogSchema } from "../../domain/devices/list-device-logs";
import { DeviceSummarySchema } from "../../domain/devices/summarize-devices";
import { WipeSchema } from "../../domain/devices/wipe-view";
import { REASONS } from "../../domain/errors";
import { literalUnion } from "../../lib/literal-union";
import { DisplayText } from "../../lib/schema-types";
import { IdOf, PageQuery, Timestamp, Uuid } from "../schemas/common";
import { CsrField, DeviceVpnConfigSchema } from "./vpn.schemas";

const Reason = Type.String({ minLength: 1, maxLength: 500 });
const WireGuardKey = Type.String({
  pattern: "^[A-Za-z0-9+/]{43}=$",
  description: "a WireGuard public key: the base64 of 32 bytes, as `wg pubkey` prints it",
});

export { DeviceListItemSchema, DeviceSchema, DeviceStatusSchema, DeviceSummarySchema, PlatformSchema };

export const DeviceListQuery = Type.Object({
  ...PageQuery,
  status: Type.Optional(DeviceStatusSchema),
  platform: Type.Optional(PlatformSchema),
  user_id: Type.Optional(IdOf("user", "Only this user's devices")),
  compliance: Type.Optional(ComplianceStatusSchema),
  q: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 200,
      description:
        "Only devices whose device_name contains this text, ignoring the case of ASCII letters; % and _ match themselves",
    }),
  ),
});

export const EnrollBody = Type.Object({
  enrollment_token: Type.String({
    minLength: 1,
    maxLength: 200,
    description: "From POST /enrollment-tokens",
  }),
  device_name: DisplayText(200, "a name of printable characters, not blank"),
  platform: PlatformSchema,
  agent_version: DisplayText(50, "a version of printable characters, not blank"),
  hardware_id: Type.String({
    minLength: 1,
    maxLength: 200,
    pattern: "^[\\x21-\\x7e](?:[\\x20-\\x7e]*[\\x21-\\x7e])?$",
    description: "printable ASCII without leading or trailing spaces",
  }),
  os_version: Type.Optional(DisplayText(100, "a version of printable characters, not blank")),
  public_key: Type.Optional(WireGuardKey),
  csr: Type.Optional(CsrField),
});

export const EnrollmentResultSchema = Type.Object(
  {
    id: Uuid,
    device_name: Type.String(),
    platform: PlatformSchema,
    status: Type.Literal("online"),
    enrolled_at: Timestamp,
    vpn_config: DeviceVpnConfigSchema,
    policy: Type.Object({ id: Uuid, name: Type.String(), version: Type.Integer() }),
    device_token: Type.String({
      description: "The agent's credential (Authorization: Bearer) for /api/v1/agent; returned once",
    }),
    device_token_expires_at: Timestamp,
    device_certificate: Type.Optional(
      Type.String({
        description:
          "Only when the request carried a csr: the client certificate (PEM; CN = device id, O = organization), " +
          "signed by the organization's device CA (GET /agent/ca.pem); valid one year",
      }),
    ),
    certificate_expires_at: Type.Optional(Timestamp),
  },
  { title: "EnrollmentResult" },
);

export const StatusBody = Type.Object({
  status: Type.Union([Type.Literal("suspended"), Type.Literal("online"), Type.Literal("active")], {
    description: "suspended, or online (alias active) to unsuspend",
  }),
  reason: Type.Optional(Reason),
});

export const StatusChangeSchema = Type.Object(
  {
    id: Uuid,
    status: DeviceStatusSchema,
    previous_status: DeviceStatusSchema,
    reason: Type.Union([Type.String(), Type.Null()], { description: "The suspension reason" }),
    updated_at: Timestamp,
  },
  { title: "DeviceStatusChange" },
);

export const WipeBody = Type.Object({
  reason: Reason,
  notify_user: Type.Optional(
    Type.Boolean({ default: true, description: "The agent tells the user before wiping (default true)" }),
  ),
});

export const WipeParams = Type.Object({ id: Type.String(), wipe_id: Type.String() });

export const WipeInitiationSchema = Type.Object(
  {
    message: Type.String(),
    wipe_id: Uuid,
    status: Type.Literal("pending"),
    initiated_at: Timestamp,
    initiated_by: Type.String({ description: "The administrator (email) or API key that asked" }),
  },
  { title: "WipeRequested" },
);

export const AssignPolicyBody = Type.Object({
  policy_id: Type.Union([IdOf("policy", "A policy of the organization"), Type.Null()], {
    description: "A policy of the organization, or null to follow the organization default",
  }),
});

export const DeviceLogQuery = Type.Object({
  ...PageQuery,
  event: Type.Optional(
    Type.String({ minLength: 1, maxLength: 100, description: "e.g. device.checkin, policy.applied" }),
  ),
  since: Type.Optional(Type.String({ format: "date-time", description: "Entries at or after this instant" })),
  until: Type.Optional(
    Type.String({ format: "date-time", description: "Entries at or before this instant" }),
  ),
});

export { DeviceLogSchema, DevicePolicySchema, WipeSchema };

export const BulkBody = Type.Object({
  device_ids: Type.Array(Uuid, { minItems: 1, maxItems: 500, uniqueItems: true }),
  action: Type.Union(
    [Type.Literal("suspend"), Type.Literal("unsuspend"), Type.Literal("wipe"), Type.Literal("assign_policy")],
    { description: "suspend and wipe need reason; assign_policy needs policy_id" },
  ),
  reason: Type.Optional(Reason),
  notify_user: Type.Optional(Type.Boolean({ description: "For wipe (default true)" })),
  policy_id: Type.Optional(
    Type.Union([IdOf("policy", "A policy of the organization"), Type.Null()], {
      description: "For assign_policy; null: follow the default",
    }),
  ),
});

export const BulkResultSchema = Type.Object(
  {
    action: Type.String(),
    results: Type.Array(
      Type.Object({
        device_id: Type.String(),
        success: Type.Boolean(),
        error: Type.Optional(Type.String({ description: "Why this device failed, e.g. device not found" })),
        wipe_id: Type.Optional(
          Type.String({
            format: "uuid",
            description: "Action wipe: the wipe requested, to poll at GET /devices/{id}/wipe/{wipe_id}",
          }),
        ),
        reason: Type.Optional(
          literalUnion(REASONS, {
            description: "The stable reason of the failure (device_not_found, device_wiped, ...)",
          }),
        ),
      }),
    ),
    succeeded: Type.Integer(),
    failed: Type.Integer(),
  },
  { title: "BulkResult" },
);

export const UpdateDeviceBody = Type.Object({
  device_name: Type.Optional(DisplayText(200, "a name of printable characters, not blank")),
  user_id: Type.Optional(
    Type.Union([IdOf("user", "A user of the device's organization"), Type.Null()], {
      description: "A user of the device's organization, or null: the device belongs to nobody",
    }),
  ),
});

export const RetireBody = Type.Object({
  reason: Type.String({
    minLength: 1,
    maxLength: 500,
    description:
      "Why the device is retired (lost, stolen, destroyed...): kept in the audit log and the event",
  }),
});

export const RetiredDeviceSchema = Type.Object(
  {
    id: Uuid,
    device_name: Type.String(),
    hardware_id: Type.String({ description: "Free again: a device with it may enroll" }),
    reason: Type.String(),
    retired_at: Timestamp,
    cancelled_wipe_id: Type.Union([Uuid, Type.Null()], {
      description: "The wipe that was still pending, cancelled with the device",
    }),
    released_vpn_ip: Type.Union([Type.String(), Type.Null()], {
      description: "The VPN address given back to the pool; the server's peer list no longer has the device",
    }),
    device_tokens_revoked: Type.Integer(),
    certificates_revoked: Type.Integer(),
  },
  { title: "RetiredDevice" },
);

export const AddPhoneBody = Type.Object({
  device_name: DisplayText(200, "a name of printable characters, not blank"),
  platform: Type.Union([Type.Literal("ios"), Type.Literal("android")], {
    description:
      "ios (iPhone, iPad: a signed configuration profile) or android (a QR code for the WireGuard app)",
  }),
  user_id: Type.Optional(
    Type.Union([IdOf("user", "The user the phone belongs to"), Type.Null()], {
      description: "A user of the organization, or null",
    }),
  ),
  policy_id: Type.Optional(
    Type.Union([IdOf("policy", "The policy to assign"), Type.Null()], {
      description: "A policy of the organization; absent or null: the organization default",
    }),
  ),
  public_key: Type.Optional(
    Type.String({
      pattern: WireGuardKey.pattern,
      description:
        "a WireGuard public key (base64 of 32 bytes) that the phone's WireGuard app made: the safer way, its private key never leaves the phone. Absent: the server makes the pair and holds the private key, sealed, until the phone fetches its profile (a day at most)",
    }),
  ),
});

export const VpnKeyBody = Type.Object({
  public_key: Type.Optional(
    Type.String({
      pattern: WireGuardKey.pattern,
      description:
        "a WireGuard public key (base64 of 32 bytes) that the phone's app made; absent: the server makes a new pair",
    }),
  ),
});

export const ProfileLinkSchema = Type.Object(
  {
    url: Type.String({
      description:
        "Opens the phone's signed profile once (no sign-in: the link is the credential); show it as a QR code for the phone's camera",
    }),
    expires_at: Timestamp,
  },
  { title: "ProfileLink" },
);

export const PhoneEnrollmentSchema = Type.Object(
  {
    device: DeviceSchema,
    profile_link: Type.Union([ProfileLinkSchema, Type.Null()], {
      description:
        "iOS: the one-time link to the profile; null for Android (its QR code is at GET /devices/:id/vpn-config)",
    }),
  },
  { title: "PhoneEnrollment" },
);

export const PhoneVpnConfigSchema = Type.Object(
  {
    wg_quick: Type.String({ description: "The tunnel as wg-quick text, which the WireGuard app imports" }),
    private_key_included: Type.Boolean({
      description: "false when the phone made its key: the text then says where its private key goes",
    }),
    qr_svg: Type.Union([Type.String(), Type.Null()], {
      description:
        "wg_quick as a QR code (SVG) for the WireGuard app's scanner; null without the private key",
    }),
  },
  { title: "PhoneVpnConfig" },
);
