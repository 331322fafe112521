import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { deleteMfaMethod, getMfaStatus, regenerateRecoveryCodes } from "../../domain/mfa/manage-mfa";
import {
  MfaEnabledSchema,
  MfaStatusSchema,
  MfaVerifyMethodSchema,
  RecoveryCodesSchema,
  RegisteredMethodSchema,
  TotpEnrolmentSchema,
} from "../../domain/mfa/mfa-view";
import { confirmTotp, startTotpEnrolment } from "../../domain/mfa/totp";
import { signInAuthenticationOptions, verifySecondFactor } from "../../domain/mfa/verify-sign-in";
import { registerWebauthn, webauthnRegistrationOptions } from "../../domain/mfa/webauthn";
import {
  CreationOptionsSchema,
  RegistrationCredentialSchema,
  RequestOptionsSchema,
} from "../../domain/mfa/webauthn-json";
import { DisplayText } from "../../lib/schema-types";
import type { AppDeps } from "../app-deps";
import { deliverTokens, RefreshCookieField } from "../browser-session";
import { requestState, type securityPlugin } from "../plugins/security";
import { errorResponses } from "../schemas/common";
import { LoginResponse, SignedInWithCookie } from "./auth.schemas";

const MfaToken = Type.String({ minLength: 1, maxLength: 200, description: "From POST /auth/login" });
const Password = Type.String({ minLength: 1, maxLength: 1024, description: "The account's password" });

/** /api/v1/auth/mfa: second factors (TOTP, WebAuthn, recovery codes) and the second step of sign-in. */
export function mfaRoutes(deps: AppDeps, security: ReturnType<typeof securityPlugin>) {
  return new Elysia({ prefix: "/api/v1/auth/mfa", tags: ["Multi-factor authentication"] })
    .use(security)
    .post(
      "/verify",
      async ({ body, request, set }) => {
        const result = await verifySecondFactor(deps, {
          mfaToken: body.mfa_token,
          method: body.method,
          code: body.code,
          ip: requestState(request).ip,
        });
        return deliverTokens(deps, set.headers, { ...result.tokens, user: result.user }, body.refresh_cookie);
      },
      {
        body: Type.Object({
          mfa_token: MfaToken,
          method: MfaVerifyMethodSchema,
          code: Type.String({
            minLength: 1,
            maxLength: 65536,
            description:
              "totp: the 6 digits; recovery_code: one unused code; webauthn: JSON.stringify(credential.toJSON()) of navigator.credentials.get",
          }),
          ...RefreshCookieField,
        }),
        response: {
          200: Type.Union([LoginResponse, SignedInWithCookie]),
          ...errorResponses(400, 401, 429, 503),
        },
        detail: {
          summary: "Finish a sign-in with a second factor",
          description:
            "Answers exactly as a successful POST /auth/login. A wrong or replayed code is a 401 and counts toward the sign-in lockout like a wrong password; the mfa_token lives 5 minutes, works once and dies after 5 wrong codes.",
          security: [],
        },
      },
    )
    .post(
      "/webauthn/authentication-options",
      async ({ body }) => await signInAuthenticationOptions(deps, body.mfa_token),
      {
        body: Type.Object({ mfa_token: MfaToken }),
        response: { 200: RequestOptionsSchema, ...errorResponses(400, 401, 429, 503) },
        detail: {
          summary: "WebAuthn request options for a sign-in",
          description:
            "For PublicKeyCredential.parseRequestOptionsFromJSON; then send JSON.stringify(credential.toJSON()) as `code` to /auth/mfa/verify with method webauthn. Each call replaces the challenge.",
          security: [],
        },
      },
    )
    .get("", async ({ principal }) => await getMfaStatus(deps, principal), {
      access: "user",
      response: { 200: MfaStatusSchema, ...errorResponses(401, 403, 429) },
      detail: { summary: "Your second factors and remaining recovery codes" },
    })
    .post("/totp", ({ body, principal, actor }) => startTotpEnrolment(deps, principal, actor, body?.name), {
      access: "user",
      body: Type.Optional(
        Type.Object({
          name: Type.Optional(DisplayText(100, 'Default "Authenticator app"')),
        }),
      ),
      response: { 200: TotpEnrolmentSchema, ...errorResponses(400, 401, 403, 409, 429) },
      detail: {
        summary: "Start setting up an authenticator app (TOTP)",
        description:
          "Scan qr_svg (or type the secret), then confirm with POST /auth/mfa/totp/confirm. Nothing is enabled before that. 409 when an app is already set up.",
      },
    })
    .post("/totp/confirm", ({ body, principal, actor }) => confirmTotp(deps, principal, actor, body.code), {
      access: "user",
      body: Type.Object({
        code: Type.String({ minLength: 1, maxLength: 20, description: "The app's 6 digits" }),
      }),
      response: { 200: MfaEnabledSchema, ...errorResponses(400, 401, 403, 409, 429) },
      detail: {
        summary: "Confirm the authenticator app with its current code",
        description:
          "When this is the user's first factor, the answer carries 10 recovery codes: the only time they are shown.",
      },
    })
    .post("/webauthn/registration-options", ({ principal }) => webauthnRegistrationOptions(deps, principal), {
      access: "user",
      response: { 200: CreationOptionsSchema, ...errorResponses(401, 403, 429, 503) },
      detail: {
        summary: "WebAuthn creation options for a new passkey or security key",
        description:
          "For PublicKeyCredential.parseCreationOptionsFromJSON; the challenge lives 5 minutes. 503 webauthn_unavailable when server.base_url names an IP address.",
      },
    })
    .post(
      "/webauthn",
      async ({ body, principal, actor, set }) => {
        const method = await registerWebauthn(deps, principal, actor, body);
        set.status = 201;
        return method;
      },
      {
        access: "user",
        body: Type.Object({
          name: DisplayText(100, 'e.g. "YubiKey 5C" or "MacBook"'),
          response: RegistrationCredentialSchema,
        }),
        response: { 201: RegisteredMethodSchema, ...errorResponses(400, 401, 403, 409, 429, 503) },
        detail: {
          summary: "Register a passkey or security key",
          description:
            "`response` is credential.toJSON() of navigator.credentials.create. When this is the user's first factor, the answer carries 10 recovery codes.",
        },
      },
    )
    .post(
      "/recovery-codes",
      ({ body, principal, actor }) => regenerateRecoveryCodes(deps, principal, actor, body.password),
      {
        access: "user",
        body: Type.Object({ password: Password }),
        response: { 200: RecoveryCodesSchema, ...errorResponses(400, 401, 403, 409, 429) },
        detail: {
          summary: "Replace your recovery codes",
          description:
            "10 new single-use codes; the old ones stop working. A wrong password is a 401 and counts toward the sign-in lockout.",
        },
      },
    )
    .delete(
      "/:method_id",
      async ({ params, body, principal, actor, set }) => {
        await deleteMfaMethod(deps, principal, actor, {
          methodId: params.method_id,
          password: body.password,
        });
        set.status = 204;
      },
      {
        access: "user",
        params: Type.Object({ method_id: Type.String({ description: "The method id (UUID)" }) }),
        body: Type.Object({ password: Password }),
        response: { 204: Type.Void({ description: "Removed" }), ...errorResponses(400, 401, 403, 404, 429) },
        detail: {
          summary: "Remove one of your second factors",
          description:
            "Needs the password (a wrong one is a 401 and counts toward the sign-in lockout). Removing the last factor turns MFA off and voids the recovery codes.",
        },
      },
    );
}
