import { Type } from "@sinclair/typebox";
import { SCOPES } from "../../domain/auth/scopes";
import { literalUnion } from "../../lib/literal-union";
import { RefreshCookieField, withRefreshCookie } from "../browser-session";
import { Uuid } from "../schemas/common";

export const LoginBody = Type.Object({
  email: Type.String({ minLength: 1, maxLength: 320, description: "The user's email address" }),
  password: Type.String({ minLength: 1, maxLength: 1024 }),
  ...RefreshCookieField,
});

import { ApiKeySchema } from "../../domain/auth/api-keys";
import { RoleSchema } from "../../domain/auth/scopes";

export { RoleSchema };

export const SignedInUserSchema = Type.Object(
  {
    id: Uuid,
    email: Type.String(),
    name: Type.String(),
    role: RoleSchema,
    organization_id: Uuid,
  },
  { title: "SignedInUser" },
);

export const TokenPairSchema = Type.Object({
  token: Type.String({ description: "Access token (JWT), sent as Authorization: Bearer" }),
  refresh_token: Type.String({ description: "Single-use refresh token (JWT)" }),
  expires_in: Type.Integer({ description: "Access token lifetime in seconds (86400)" }),
  token_type: Type.Literal("Bearer"),
});

export const LoginResponse = Type.Object(
  {
    ...TokenPairSchema.properties,
    user: SignedInUserSchema,
    mfa_setup_required: Type.Optional(
      Type.Literal(true, {
        description:
          "The organization requires MFA and the user has none: this session opens only GET /users/me, /auth/mfa/* and sign-out until a factor is confirmed",
      }),
    ),
  },
  { title: "SignedIn" },
);

/** A sign-in's answer when the request asked for the refresh token in the browser's cookie. */
export const SignedInWithCookie = withRefreshCookie(LoginResponse, "SignedInWithCookie");

export const RefreshBody = Type.Object({
  refresh_token: Type.Optional(
    Type.String({ minLength: 1, description: "Required unless the bulwark_refresh cookie carries it" }),
  ),
});
export const RefreshResponse = Type.Union([
  TokenPairSchema,
  withRefreshCookie(TokenPairSchema, "RefreshedWithCookie"),
]);

export const LogoutBody = Type.Object({ refresh_token: Type.Optional(Type.String()) });

export const CreateApiKeyBody = Type.Object({
  name: Type.String({ minLength: 1, maxLength: 200 }),
  scopes: Type.Array(literalUnion(SCOPES), {
    minItems: 1,
    maxItems: SCOPES.length,
    uniqueItems: true,
    description: `Scopes for the key, no wider than your own: ${SCOPES.join(", ")}`,
  }),
  expires_in_days: Type.Optional(
    Type.Integer({ minimum: 1, maximum: 3650, description: "Lifetime in days (default 90)" }),
  ),
});

export { ApiKeySchema };

export const CreatedApiKeySchema = Type.Object(
  {
    ...ApiKeySchema.properties,
    key: Type.String({ description: "The API key (bwk_...). Shown only in this response." }),
  },
  { title: "CreatedApiKey" },
);

export const JwksSchema = Type.Object({ keys: Type.Array(Type.Record(Type.String(), Type.Unknown())) });
