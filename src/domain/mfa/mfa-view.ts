import { type Static, Type } from "@sinclair/typebox";
import { MFA_METHOD_TYPES, MFA_VERIFY_METHODS } from "../../db/schema/enums";
import { literalUnion } from "../../lib/literal-union";
import { NullableTimestamp, Timestamp, Uuid } from "../../lib/schema-types";

export const MfaMethodTypeSchema = literalUnion(MFA_METHOD_TYPES);
export const MfaVerifyMethodSchema = literalUnion(MFA_VERIFY_METHODS, {
  description: "totp: a 6-digit code; webauthn: the assertion's JSON text; recovery_code: one of the codes",
});

/** A confirmed second factor, never its secret. */
export const MfaMethodSchema = Type.Object(
  {
    id: Uuid,
    type: MfaMethodTypeSchema,
    name: Type.String(),
    created_at: Timestamp,
    last_used_at: NullableTimestamp,
  },
  { title: "MfaMethod" },
);

const RecoveryCodesList = Type.Array(Type.String(), {
  minItems: 10,
  maxItems: 10,
  description: "10 single-use recovery codes (xxxxx-xxxxx). Shown only in this response: store them safely.",
});

export const MfaStatusSchema = Type.Object(
  {
    enabled: Type.Boolean({ description: "At least one TOTP or WebAuthn factor is confirmed" }),
    methods: Type.Array(MfaMethodSchema),
    recovery_codes_remaining: Type.Integer({ minimum: 0 }),
  },
  { title: "MfaStatus" },
);

export const TotpEnrolmentSchema = Type.Object(
  {
    secret: Type.String({ description: "Base32 secret, for typing into an authenticator app" }),
    otpauth_url: Type.String({ description: "otpauth://totp/... (SHA-1, 6 digits, 30 s)" }),
    qr_svg: Type.String({ description: "An SVG document: a QR code of otpauth_url to scan with a phone" }),
  },
  { title: "TotpEnrolment" },
);

export const MfaEnabledSchema = Type.Object(
  {
    enabled: Type.Literal(true),
    recovery_codes: Type.Optional(RecoveryCodesList),
  },
  { title: "MfaConfirmation" },
);

export const RegisteredMethodSchema = Type.Object(
  { ...MfaMethodSchema.properties, recovery_codes: Type.Optional(RecoveryCodesList) },
  { title: "RegisteredMfaMethod" },
);

export const RecoveryCodesSchema = Type.Object(
  { recovery_codes: RecoveryCodesList },
  { title: "RecoveryCodes" },
);

export const MfaChallengeSchema = Type.Object(
  {
    mfa_required: Type.Literal(true),
    mfa_token: Type.String({
      description: "Finishes this sign-in at POST /auth/mfa/verify: 5 minutes, once, at most 5 wrong codes",
    }),
    mfa_methods: Type.Array(MfaMethodTypeSchema, { description: "The factors the user has" }),
    expires_in: Type.Integer({ description: "Seconds the mfa_token stays valid (300)" }),
  },
  { title: "MfaChallenge" },
);

export type MfaMethodView = Static<typeof MfaMethodSchema>;
export type MfaStatus = Static<typeof MfaStatusSchema>;
export type MfaChallengeView = Static<typeof MfaChallengeSchema>;
export type MfaVerifyMethod = Static<typeof MfaVerifyMethodSchema>;

export function toMfaMethodView(row: {
  id: string;
  type: "totp" | "webauthn";
  name: string;
  createdAt: string;
  lastUsedAt: string | null;
}): MfaMethodView {
  return {
    id: row.id,
    type: row.type,
    name: row.name,
    created_at: row.createdAt,
    last_used_at: row.lastUsedAt,
  };
}
