import { Type } from "@sinclair/typebox";
import { NullableTimestamp, Timestamp, Uuid } from "../schemas/common";

export const CreateEnrollmentTokenBody = Type.Object({
  expires_in_hours: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 8760, default: 168, description: "Lifetime in hours (default 168)" }),
  ),
  max_uses: Type.Optional(
    Type.Union([Type.Integer({ minimum: 1, maximum: 1_000_000 }), Type.Null()], {
      default: 1,
      description: "Devices it may enroll (default 1); null for unlimited",
    }),
  ),
  user_id: Type.Optional(Uuid),
  policy_id: Type.Optional(Uuid),
});

export const EnrollmentTokenSchema = Type.Object(
  {
    id: Uuid,
    expires_at: Timestamp,
    max_uses: Type.Union([Type.Integer(), Type.Null()], { description: "null: unlimited" }),
    uses: Type.Integer(),
    user_id: Type.Union([Uuid, Type.Null()], { description: "Devices enrolled with it belong to this user" }),
    policy_id: Type.Union([Uuid, Type.Null()], {
      description: "Devices enrolled with it follow this policy; null: the organization default",
    }),
    created_at: Timestamp,
    revoked_at: NullableTimestamp,
    state: Type.Union(
      [Type.Literal("active"), Type.Literal("expired"), Type.Literal("revoked"), Type.Literal("used_up")],
      { description: "Whether the token can still enroll a device" },
    ),
  },
  { title: "EnrollmentToken" },
);

export const CreatedEnrollmentTokenSchema = Type.Object(
  {
    ...EnrollmentTokenSchema.properties,
    token: Type.String({ description: "The token value (bwe_...), returned only here" }),
  },
  { title: "CreatedEnrollmentToken" },
);
