import { Type } from "@sinclair/typebox";
import {
  ComplianceStatusSchema,
  DeviceFactsSchema,
  MissingRulesSchema,
  ViolationSchema,
} from "../../domain/devices/evaluate-compliance";
import { PolicyDataSchema } from "../../domain/policies/policy-document";
import { Timestamp, Uuid } from "../schemas/common";
import { DeviceStatusSchema } from "./devices.schemas";
import { PeerSettingsSchema } from "./vpn.schemas";

export const CheckInBody = Type.Object({
  agent_version: Type.Optional(Type.String({ minLength: 1, maxLength: 50 })),
  os_version: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 100,
      description: "e.g. 14.4, judged against the platform minimum",
    }),
  ),
  policy_id: Type.Optional(
    Type.String({ format: "uuid", description: "The policy the agent has applied, if it knows" }),
  ),
  policy_version: Type.Optional(
    Type.Integer({ minimum: 1, description: "The policy version the agent has applied" }),
  ),
  facts: Type.Optional(DeviceFactsSchema),
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
    vpn_config: PeerSettingsSchema,
    next_checkin_seconds: Type.Integer({ description: "When to check in next" }),
  },
  { title: "CheckInResult" },
);

export const WipeIdParams = Type.Object({ wipe_id: Type.String() });

export const CompleteWipeBody = Type.Object({
  success: Type.Boolean({ description: "true: the work profile is wiped; false: it could not be" }),
  error: Type.Optional(Type.String({ minLength: 1, maxLength: 2000, description: "What went wrong" })),
});
