import { Type } from "@sinclair/typebox";
import { MIN_PASSWORD_LENGTH } from "../../domain/users/password-rules";
import { Timestamp, Uuid } from "../schemas/common";
import { RoleSchema } from "./auth.schemas";

export const UserSchema = Type.Object(
  {
    id: Uuid,
    email: Type.String(),
    name: Type.String(),
    role: RoleSchema,
    organization_id: Uuid,
    disabled: Type.Boolean(),
    restricted: Type.Boolean({
      description: "Processing restricted at the user's request (GDPR); cannot sign in",
    }),
    last_login_at: Type.Union([Timestamp, Type.Null()]),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { title: "User" },
);

const Email = Type.String({
  format: "email",
  maxLength: 320,
  description: "Email address, unique across the service",
});
const Password = Type.String({
  minLength: MIN_PASSWORD_LENGTH,
  maxLength: 1024,
  description: `At least ${MIN_PASSWORD_LENGTH} characters`,
});
const Name = Type.String({ minLength: 1, maxLength: 200 });

export const CreateUserBody = Type.Object({ email: Email, name: Name, role: RoleSchema, password: Password });

export const UpdateUserBody = Type.Object(
  {
    name: Type.Optional(Name),
    role: Type.Optional(RoleSchema),
    disabled: Type.Optional(
      Type.Boolean({ description: "A disabled user cannot sign in; their tokens stop working at once" }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const ChangePasswordBody = Type.Object({
  current_password: Type.String({ minLength: 1, maxLength: 1024 }),
  new_password: Password,
});
