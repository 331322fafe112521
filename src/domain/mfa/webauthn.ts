import { Value } from "@sinclair/typebox/value";
import { and, desc, eq, isNull } from "drizzle-orm";
import { type DbOrTx, withTransaction } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { mfaChallenges, mfaMethods } from "../../db/tables";
import { addSeconds, toIso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import { recordAudit } from "../audit/record-audit";
import type { Principal } from "../auth/principal";
import type { Actor, DomainDeps } from "../deps";
import { ConflictError, ValidationError } from "../errors";
import { findLiveUser } from "../users/user-view";
import { type MfaMethodView, toMfaMethodView } from "./mfa-view";
import { issueRecoveryCodes } from "./recovery-codes";
import { relyingParty } from "./relying-party";
import type { CodeCheck } from "./totp";
import { confirmedMethods, syncMfaEnabled } from "./user-factors";
import {
  type AuthenticationCredential,
  AuthenticationCredentialSchema,
  type CreationOptions,
  type RegistrationCredential,
  type RequestOptions,
} from "./webauthn-json";

/**
 * @simplewebauthn/server, loaded on first use: it brings @peculiar/x509 and its ASN.1 schemas, ~80 ms of
 * every start otherwise. @peculiar/x509 needs reflect-metadata loaded before it.
 */
function webauthnServer() {
  return import("reflect-metadata").then(() => import("@simplewebauthn/server"));
}

const CEREMONY_TIMEOUT_MS = 300_000;
const CHALLENGE_TTL_SECONDS = 300;

async function webauthnMethods(db: DbOrTx, userId: string) {
  return (await confirmedMethods(db, userId)).filter(
    (method) => method.type === "webauthn" && method.credentialId,
  );
}

/** Creation options for a new passkey or security key; its challenge is kept 5 minutes. */
export async function webauthnRegistrationOptions(
  deps: DomainDeps,
  principal: Principal,
): Promise<CreationOptions> {
  const rp = relyingParty(deps.config);
  const user = await findLiveUser(deps.db, principal.organizationId, principal.userId);
  const options = await (await webauthnServer()).generateRegistrationOptions({
    rpName: rp.name,
    rpID: rp.id,
    userName: user.email,
    userDisplayName: user.name,
    userID: new TextEncoder().encode(user.id),
    attestationType: "none",
    timeout: CEREMONY_TIMEOUT_MS,
    // An authenticator already registered is not registered twice.
    excludeCredentials: (await webauthnMethods(deps.db, user.id)).map((method) => ({
      id: method.credentialId as string,
      transports: (method.transports ?? undefined) as never,
    })),
    authenticatorSelection: { residentKey: "preferred", userVerification: "preferred" },
  });
  const now = deps.clock.now();
  await withTransaction(deps.db, async (tx) => {
    await tx
      .delete(mfaChallenges)
      .where(and(eq(mfaChallenges.userId, user.id), eq(mfaChallenges.kind, "webauthn_registration")));
    await tx.insert(mfaChallenges).values({
      id: newId(),
      userId: user.id,
      kind: "webauthn_registration",
      webauthnChallenge: options.challenge,
      createdAt: toIso(now),
      expiresAt: toIso(addSeconds(now, CHALLENGE_TTL_SECONDS)),
    });
  });
  // The library's interfaces lack index signatures; the shape is the same (checked on every answer).
  return options as CreationOptions;
}

/** Registers the authenticator's answer to the newest registration options as a named factor. */
export async function registerWebauthn(
  deps: DomainDeps,
  principal: Principal,
  actor: Actor,
  input: { name: string; response: RegistrationCredential },
): Promise<MfaMethodView & { recovery_codes?: string[] }> {
  const rp = relyingParty(deps.config);
  const now = deps.clock.now();
  const challenge = await firstRow(
    deps.db
      .select()
      .from(mfaChallenges)
      .where(
        and(
          eq(mfaChallenges.userId, principal.userId),
          eq(mfaChallenges.kind, "webauthn_registration"),
          isNull(mfaChallenges.usedAt),
        ),
      )
      .orderBy(desc(mfaChallenges.createdAt)),
  );
  const optionsRequired = () =>
    new ValidationError(
      "no registration options to answer",
      [],
      "request POST /api/v1/auth/mfa/webauthn/registration-options first (its challenge lives 5 minutes)",
      "webauthn_options_required",
    );
  if (!challenge?.webauthnChallenge || challenge.expiresAt <= toIso(now)) throw optionsRequired();
  const verification = await (await webauthnServer())
    .verifyRegistrationResponse({
      response: input.response as never,
      expectedChallenge: challenge.webauthnChallenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.id,
      requireUserVerification: false,
    })
    .catch((error: Error) => {
      throw invalidResponse("response", error.message);
    });
  if (!verification.verified) throw invalidResponse("response", "the registration could not be verified");
  const { credential } = verification.registrationInfo;
  return await withTransaction(deps.db, async (tx) => {
    // A challenge answers one ceremony: another registration that answered it first took it.
    const taken = await tx
      .delete(mfaChallenges)
      .where(eq(mfaChallenges.id, challenge.id))
      .returning({ id: mfaChallenges.id });
    if (taken.length === 0) throw optionsRequired();
    const registered = await firstRow(
      tx.select({ id: mfaMethods.id }).from(mfaMethods).where(eq(mfaMethods.credentialId, credential.id)),
    );
    if (registered)
      throw new ConflictError(
        "webauthn_credential_registered",
        "this authenticator is already registered",
        "each passkey or security key is registered once",
      );
    const id = newId();
    await tx.insert(mfaMethods).values({
      id,
      userId: principal.userId,
      type: "webauthn",
      name: input.name,
      credentialId: credential.id,
      publicKey: Buffer.from(credential.publicKey).toString("base64url"),
      signCount: credential.counter,
      transports: credential.transports ?? input.response.response.transports ?? null,
      confirmedAt: toIso(now),
      createdAt: toIso(now),
    });
    const { wasEnabled } = await syncMfaEnabled(tx, principal.userId);
    await recordAudit(tx, now, actor, {
      action: "mfa.webauthn_register",
      targetType: "user",
      targetId: principal.userId,
      details: { method_id: id, name: input.name },
    });
    const row = await firstRow(tx.select().from(mfaMethods).where(eq(mfaMethods.id, id)));
    const view = toMfaMethodView(row as typeof mfaMethods.$inferSelect);
    return wasEnabled
      ? view
      : { ...view, recovery_codes: await issueRecoveryCodes(tx, deps.secrets, principal.userId, now) };
  });
}

/** Request options for a sign-in challenge; the challenge is kept on it (a newer call replaces it). */
export async function webauthnAuthenticationOptions(
  deps: DomainDeps,
  challenge: { id: string; userId: string },
): Promise<RequestOptions> {
  const rp = relyingParty(deps.config);
  const methods = await webauthnMethods(deps.db, challenge.userId);
  if (methods.length === 0) throw notEnrolled("webauthn");
  const options = await (await webauthnServer()).generateAuthenticationOptions({
    rpID: rp.id,
    timeout: CEREMONY_TIMEOUT_MS,
    userVerification: "preferred",
    allowCredentials: methods.map((method) => ({
      id: method.credentialId as string,
      transports: (method.transports ?? undefined) as never,
    })),
  });
  await withTransaction(
    deps.db,
    async (tx) =>
      await tx
        .update(mfaChallenges)
        .set({ webauthnChallenge: options.challenge })
        .where(eq(mfaChallenges.id, challenge.id)),
  );
  return options as RequestOptions;
}

/** `code` as JSON text of an assertion, checked for shape before anything is counted; else 400. */
export function parseAssertion(code: string): AuthenticationCredential {
  let parsed: unknown;
  try {
    parsed = JSON.parse(code);
  } catch {
    throw invalidResponse("code", "is not JSON: send JSON.stringify(credential.toJSON())");
  }
  if (!Value.Check(AuthenticationCredentialSchema, parsed))
    throw invalidResponse(
      "code",
      "is not a WebAuthn assertion (credential.toJSON() of navigator.credentials.get)",
    );
  return parsed;
}

/**
 * Checks an assertion against the challenge of the sign-in's authentication options and the user's
 * credential: signature, origin, relying party and a signature counter that moved forward. The challenge
 * is spent either way, so an assertion can never be presented twice.
 */
export async function checkAssertion(
  deps: DomainDeps,
  challenge: { id: string; userId: string; webauthnChallenge: string | null },
  assertion: AuthenticationCredential,
): Promise<CodeCheck> {
  const rp = relyingParty(deps.config);
  if (!challenge.webauthnChallenge) return "invalid";
  await withTransaction(
    deps.db,
    async (tx) =>
      await tx
        .update(mfaChallenges)
        .set({ webauthnChallenge: null })
        .where(eq(mfaChallenges.id, challenge.id)),
  );
  const method = (await webauthnMethods(deps.db, challenge.userId)).find(
    (row) => row.credentialId === assertion.id,
  );
  if (!method?.publicKey) return "invalid";
  try {
    const result = await (await webauthnServer()).verifyAuthenticationResponse({
      response: assertion as never,
      expectedChallenge: challenge.webauthnChallenge,
      expectedOrigin: rp.origins,
      expectedRPID: rp.id,
      credential: {
        id: method.credentialId as string,
        publicKey: Buffer.from(method.publicKey, "base64url"),
        counter: method.signCount,
        transports: (method.transports ?? undefined) as never,
      },
      requireUserVerification: false,
    });
    if (!result.verified) return "invalid";
    await withTransaction(
      deps.db,
      async (tx) =>
        await tx
          .update(mfaMethods)
          .set({ signCount: result.authenticationInfo.newCounter, lastUsedAt: toIso(deps.clock.now()) })
          .where(eq(mfaMethods.id, method.id)),
    );
    return "accepted";
  } catch {
    return "invalid";
  }
}

export function notEnrolled(method: string): ValidationError {
  return new ValidationError(
    "this factor is not set up for the user",
    [{ field: "method", message: `the user has no ${method} factor` }],
    undefined,
    "mfa_method_not_enrolled",
  );
}

function invalidResponse(field: string, message: string): ValidationError {
  return new ValidationError(
    "invalid WebAuthn response",
    [{ field, message }],
    undefined,
    "webauthn_response_invalid",
  );
}
