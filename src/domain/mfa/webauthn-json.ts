import { type Static, Type } from "@sinclair/typebox";

/**
 * The WebAuthn JSON shapes of the Level 3 specification: options as browsers'
 * `PublicKeyCredential.parseCreationOptionsFromJSON` / `parseRequestOptionsFromJSON` take them, and
 * credentials as `credential.toJSON()` gives them. Binary values are base64url strings.
 */
const Base64Url = Type.String({ pattern: "^[A-Za-z0-9_-]*$", description: "base64url" });
const Transports = Type.Array(Type.String({ maxLength: 32 }), { maxItems: 10 });
const CredentialDescriptor = Type.Object({
  id: Base64Url,
  type: Type.Literal("public-key"),
  transports: Type.Optional(Transports),
});
const Extensions = Type.Record(Type.String(), Type.Unknown());

export const CreationOptionsSchema = Type.Object(
  {
    rp: Type.Object({ name: Type.String(), id: Type.Optional(Type.String()) }),
    user: Type.Object({ id: Base64Url, name: Type.String(), displayName: Type.String() }),
    challenge: Base64Url,
    pubKeyCredParams: Type.Array(Type.Object({ alg: Type.Integer(), type: Type.Literal("public-key") })),
    timeout: Type.Optional(Type.Integer()),
    excludeCredentials: Type.Optional(Type.Array(CredentialDescriptor)),
    authenticatorSelection: Type.Optional(
      Type.Object({
        authenticatorAttachment: Type.Optional(Type.String()),
        residentKey: Type.Optional(Type.String()),
        requireResidentKey: Type.Optional(Type.Boolean()),
        userVerification: Type.Optional(Type.String()),
      }),
    ),
    attestation: Type.Optional(Type.String()),
    extensions: Type.Optional(Extensions),
    hints: Type.Optional(Type.Array(Type.String())),
  },
  {
    title: "WebAuthnCreationOptions",
    description:
      "Pass to PublicKeyCredential.parseCreationOptionsFromJSON, then navigator.credentials.create",
  },
);

export const RequestOptionsSchema = Type.Object(
  {
    challenge: Base64Url,
    timeout: Type.Optional(Type.Integer()),
    rpId: Type.Optional(Type.String()),
    allowCredentials: Type.Optional(Type.Array(CredentialDescriptor)),
    userVerification: Type.Optional(Type.String()),
    extensions: Type.Optional(Extensions),
    hints: Type.Optional(Type.Array(Type.String())),
  },
  {
    title: "WebAuthnRequestOptions",
    description: "Pass to PublicKeyCredential.parseRequestOptionsFromJSON, then navigator.credentials.get",
  },
);

const CredentialCommon = {
  id: Base64Url,
  rawId: Base64Url,
  type: Type.Literal("public-key"),
  authenticatorAttachment: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  clientExtensionResults: Extensions,
};

/** What `credential.toJSON()` gives after navigator.credentials.create. */
export const RegistrationCredentialSchema = Type.Object(
  {
    ...CredentialCommon,
    response: Type.Object(
      {
        clientDataJSON: Base64Url,
        attestationObject: Base64Url,
        authenticatorData: Type.Optional(Base64Url),
        transports: Type.Optional(Transports),
        publicKeyAlgorithm: Type.Optional(Type.Integer()),
        publicKey: Type.Optional(Base64Url),
      },
      { additionalProperties: true },
    ),
  },
  { title: "WebAuthnRegistrationCredential", additionalProperties: true },
);

/** What `credential.toJSON()` gives after navigator.credentials.get (sent as JSON text in `code`). */
export const AuthenticationCredentialSchema = Type.Object(
  {
    ...CredentialCommon,
    response: Type.Object(
      {
        clientDataJSON: Base64Url,
        authenticatorData: Base64Url,
        signature: Base64Url,
        userHandle: Type.Optional(Type.Union([Base64Url, Type.Null()])),
      },
      { additionalProperties: true },
    ),
  },
  { additionalProperties: true },
);

export type CreationOptions = Static<typeof CreationOptionsSchema>;
export type RequestOptions = Static<typeof RequestOptionsSchema>;
export type RegistrationCredential = Static<typeof RegistrationCredentialSchema>;
export type AuthenticationCredential = Static<typeof AuthenticationCredentialSchema>;
