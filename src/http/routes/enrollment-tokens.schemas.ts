import { Type } from "@sinclair/typebox";
import { IdOf } from "../schemas/common";

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
  user_id: Type.Optional(IdOf("user", "Devices enrolled with it belong to this user of the organization")),
  policy_id: Type.Optional(IdOf("policy", "Devices enrolled with it follow this policy of the organization")),
});

import { EnrollmentTokenSchema } from "../../domain/devices/enrollment-token-view";

export { EnrollmentTokenSchema };

export const CreatedEnrollmentTokenSchema = Type.Object(
  {
    ...EnrollmentTokenSchema.properties,
    token: Type.String({ description: "The token value (bwe_...), returned only here" }),
  },
  { title: "CreatedEnrollmentToken" },
);
