import { Type } from "@sinclair/typebox";
import { MIN_PASSWORD_LENGTH } from "../../domain/users/password-rules";
import { RoleSchema } from "./auth.schemas";

export { UserSchema } from "../../domain/users/user-view";

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
    restricted: Type.Optional(
      Type.Literal(false, {
        description:
          "false lifts a restriction of processing (GDPR): the user can sign in again and their API keys work again. A restriction is set with POST /gdpr/restrict, which records the request.",
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const ChangePasswordBody = Type.Object({
  current_password: Type.String({ minLength: 1, maxLength: 1024 }),
  new_password: Password,
});
