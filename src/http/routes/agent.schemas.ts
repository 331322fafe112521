import { Type } from "@sinclair/typebox";
import { EnforcementReportSchema, ReportedFactsSchema } from "../../domain/devices/device-report";
import {
  ComplianceStatusSchema,
  MissingRulesSchema,
  ViolationSchema,
} from "../../domain/devices/evaluate-compliance";
import { WipeReportSchema } from "../../domain/devices/wipe-view";
import { PolicyDataSchema } from "../../domain/policies/policy-document";
import { Timestamp, Uuid } from "../schemas/common";
import { DeviceStatusSchema } from "./devices.schemas";
import { PeerSettingsSchema } from "./vpn.schemas";

/**
 * Which agent `GET /agent/download` serves. Plain literals, no Transform: a Transform in a query
 * schema was silently skipped in the minified build (src/http/schemas/query-integer.ts).
 */
export const AgentDownloadQuery = Type.Object({
  os: Type.Optional(
    Type.Union([Type.Literal("linux"), Type.Literal("windows"), Type.Literal("macos")], {
      description: "The agent's system: linux (the default), windows (bulwark.exe) or macos",
    }),
  ),
  arch: Type.Optional(
    Type.Union([Type.Literal("x64"), Type.Literal("arm64")], {
      description:
        "The agent's processor: x64 (the default for linux and windows, the only build for them) or, " +
        "for macos, where it is required, arm64 (Apple silicon) or x64 (Intel)",
    }),
  ),
});

export const CheckInBody = Type.Object({
  agent_version: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
  os_version: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 100,
      description:
        "e.g. 14.4, judged against the platform minimum; on Linux os-release's `ID VERSION_ID` " +
        "(ubuntu 24.04), judged against the distribution's minimum in devices.min_os_versions",
    }),
  ),
  policy_id: Type.Optional(
    Type.String({ format: "uuid", description: "The policy the agent has applied, if it knows" }),
  ),
  policy_version: Type.Optional(
    Type.Integer({ minimum: 1, description: "The policy version the agent has applied" }),
  ),
  facts: Type.Optional(ReportedFactsSchema),
  enforcement: Type.Optional(EnforcementReportSchema),
});

export const CheckInResponse = Type.Object(
  {
    device_id: Uuid,
    status: DeviceStatusSchema,
    policy: Type.Object(
      {
        id: Uuid,
        name: Type.String(),
        version: Type.Integer(),
        policy_data: PolicyDataSchema,
      },
      { description: "The current policy, always sent; apply it when its id or version differs from yours" },
    ),
    commands: Type.Array(
      Type.Object({
        type: Type.Literal("wipe"),
        wipe_id: Uuid,
        reason: Type.String(),
        notify_user: Type.Boolean({ description: "Tell the user before wiping" }),
        initiated_at: Timestamp,
      }),
      { description: "Pending commands; confirm each wipe with POST /agent/wipes/:wipe_id/complete" },
    ),
    compliance: Type.Object({
      status: ComplianceStatusSchema,
      violations: Type.Array(ViolationSchema),
      missing: MissingRulesSchema,
    }),
    ignored_facts: Type.Array(Type.String(), {
      description:
        "The reported facts this server does not know (a newer agent's, or a misspelled name such as " +
        "diskEncrypted): kept, but not judged. Empty when every fact was known.",
    }),
    vpn_config: PeerSettingsSchema,
    next_checkin_seconds: Type.Integer({ minimum: 1, maximum: 86400, description: "When to check in next" }),
  },
  { title: "CheckInResult" },
);

export const CheckInPreviewSchema = Type.Object(
  {
    device_id: CheckInResponse.properties.device_id,
    policy: CheckInResponse.properties.policy,
    commands: CheckInResponse.properties.commands,
    vpn_config: CheckInResponse.properties.vpn_config,
  },
  {
    title: "CheckInPreview",
    description: "What a check-in would answer about the device's policy, commands and VPN settings",
  },
);

export const WipeIdParams = Type.Object({ wipe_id: Type.String() });

export const CompleteWipeBody = Type.Object({
  success: Type.Boolean({ description: "true: the work profile is wiped; false: it could not be" }),
  error: Type.Optional(Type.String({ minLength: 1, maxLength: 2000, description: "What went wrong" })),
  report: Type.Optional(WipeReportSchema),
});

export const RotatedDeviceTokenSchema = Type.Object(
  {
    device_token: Type.String({ description: "The new device token (bwd_...), shown once" }),
    device_token_expires_at: Timestamp,
    previous_tokens_expire_at: Type.String({
      format: "date-time",
      description: "Until when the device's earlier tokens still work (five minutes)",
    }),
  },
  { title: "RotatedDeviceToken" },
);
