import { and, eq, isNotNull } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { mfaMethods, users } from "../../db/tables";
import { recordAudit } from "../audit/record-audit";
import type { AuthDeps } from "../auth/auth-deps";
import { attemptsLeft, reservePasswordAttempt, settleFailedPasswordAttempt } from "../auth/login-throttle";
import { type SignInResult, startSession, toSignedInUser } from "../auth/sign-in";
import type { Actor } from "../deps";
import { DomainError, UnauthenticatedError, ValidationError } from "../errors";
import type { MfaVerifyMethod } from "./mfa-view";
import { consumeRecoveryCode, isRecoveryCodeShaped, remainingRecoveryCodes } from "./recovery-codes";
import {
  countWrongCode,
  findLiveSignInChallenge,
  lookUpSignInChallenge,
  MFA_TOKEN_MAX_FAILURES,
  type SignInChallenge,
  useSignInChallenge,
} from "./sign-in-challenge";
import { type CodeCheck, checkTotpCode, readTotpSecret } from "./totp";
import { checkAssertion, notEnrolled, parseAssertion, webauthnAuthenticationOptions } from "./webauthn";

/** WebAuthn request options for the sign-in of `mfaToken`. */
export async function signInAuthenticationOptions(deps: AuthDeps, mfaToken: string) {
  const challenge = await findLiveSignInChallenge(deps.db, mfaToken, deps.clock.now());
  return webauthnAuthenticationOptions(deps, challenge);
}

/**
 * The second step of a sign-in: the mfa_token and one code of a factor the user has. A right code ends
 * as a password sign-in does (tokens and user); a wrong one counts against the token (5 and it dies)
 * and against the (email, address) sign-in throttle, like a wrong password. Every attempt on a known
 * token is audited, refused ones (expired token, lockout) included.
 */
export async function verifySecondFactor(
  deps: AuthDeps,
  input: { mfaToken: string; method: MfaVerifyMethod; code: string; ip: string },
): Promise<Extract<SignInResult, { kind: "tokens" }>> {
  const now = deps.clock.now();
  const { row: challenge, refusal } = await lookUpSignInChallenge(deps.db, input.mfaToken, now);
  const user =
    challenge && (await firstRow(deps.db.select().from(users).where(eq(users.id, challenge.userId))));
  if (!challenge || !user)
    throw refusal ?? new UnauthenticatedError("mfa_token_invalid", "invalid or expired MFA token");
  const actor: Actor = {
    type: "anonymous",
    id: null,
    label: user.email,
    organizationId: user.organizationId,
    ip: input.ip,
  };
  const audit = (outcome: "success" | "failure", details: Record<string, unknown>) =>
    withTransaction(
      deps.db,
      async (tx) =>
        await recordAudit(tx, deps.clock.now(), actor, {
          action: "auth.mfa_verify",
          outcome,
          targetType: "user",
          targetId: user.id,
          details: { method: input.method, ...details },
        }),
    );
  try {
    if (refusal) throw refusal;
    if (user.deletedAt || user.isDisabled || user.isRestricted)
      throw new UnauthenticatedError(
        user.isDisabled ? "account_disabled" : user.isRestricted ? "account_restricted" : "account_deleted",
        "the account cannot sign in",
      );
    // Mistakes of form are answered before anything is counted: they cannot succeed, so they guess nothing.
    const prepared = await prepareCheck(deps, challenge, user.id, input.method, input.code);
    await reservePasswordAttempt(deps, user.email, input.ip);
    const check = await prepared();
    if (
      check !== "accepted" ||
      (input.method !== "recovery_code" &&
        !(await withTransaction(deps.db, async (tx) => await useSignInChallenge(tx, challenge.id, now))))
    )
      throw await wrongCode(deps, challenge, user.email, input.ip, check);
  } catch (error) {
    if (error instanceof DomainError)
      await audit("failure", { reason: error.reason, ...(error.details ? { details: error.details } : {}) });
    throw error;
  }
  await audit(
    "success",
    input.method === "recovery_code"
      ? { recovery_codes_remaining: await remainingRecoveryCodes(deps.db, user.id) }
      : {},
  );
  const tokens = await startSession(deps, user, input.ip, "mfa");
  return { kind: "tokens", tokens, user: toSignedInUser(user) };
}

/** Checks the form of the code and that the user has the factor (400s); returns the check to run. */
async function prepareCheck(
  deps: AuthDeps,
  challenge: SignInChallenge,
  userId: string,
  method: MfaVerifyMethod,
  code: string,
): Promise<() => Promise<CodeCheck>> {
  if (method === "totp") {
    const totp = await firstRow(
      deps.db
        .select()
        .from(mfaMethods)
        .where(
          and(eq(mfaMethods.userId, userId), eq(mfaMethods.type, "totp"), isNotNull(mfaMethods.confirmedAt)),
        ),
    );
    if (!totp) throw notEnrolled("totp");
    if (!/^\d{6}$/.test(code.replace(/\s/g, ""))) throw malformedCode("must be the 6 digits the app shows");
    if (totp.secret) readTotpSecret(deps.secrets, totp.secret);
    return () => checkTotpCode(deps, totp, code);
  }
  if (method === "webauthn") {
    const hasKey = await firstRow(
      deps.db
        .select({ id: mfaMethods.id })
        .from(mfaMethods)
        .where(
          and(
            eq(mfaMethods.userId, userId),
            eq(mfaMethods.type, "webauthn"),
            isNotNull(mfaMethods.confirmedAt),
          ),
        ),
    );
    if (!hasKey) throw notEnrolled("webauthn");
    const assertion = parseAssertion(code);
    if (!challenge.webauthnChallenge)
      throw new ValidationError(
        "no authentication options to answer",
        [],
        "request POST /api/v1/auth/mfa/webauthn/authentication-options with this mfa_token first; each challenge answers one assertion",
        "webauthn_options_required",
      );
    return () => checkAssertion(deps, challenge, assertion);
  }
  if (!isRecoveryCodeShaped(code)) throw malformedCode("must be a recovery code like k7m2q-x9vtr");
  // The code and the token are used up together: two answers to one token at once, each with another
  // code, sign in once and burn one code (the other finds the token used, and its code is kept).
  return async () =>
    await withTransaction(deps.db, async (tx) => {
      const now = deps.clock.now();
      if (!(await consumeRecoveryCode(tx, deps.secrets, userId, code, now))) return "invalid";
      if (!(await useSignInChallenge(tx, challenge.id, now)))
        throw new UnauthenticatedError(
          "mfa_token_invalid",
          "invalid or expired MFA token",
          "the MFA token has been used: sign in again",
        );
      return "accepted";
    });
}

/** Counts a wrong code on the token and the sign-in throttle; the 401 says how many tries are left. */
async function wrongCode(
  deps: AuthDeps,
  challenge: SignInChallenge,
  email: string,
  ip: string,
  check: CodeCheck,
): Promise<UnauthenticatedError> {
  const { tokenLeft, lockoutLeft } = await withTransaction(deps.db, async (tx) => {
    const failures = await countWrongCode(tx, challenge.id);
    await settleFailedPasswordAttempt(deps, tx, email, ip);
    return {
      tokenLeft: MFA_TOKEN_MAX_FAILURES - failures,
      lockoutLeft: await attemptsLeft(deps, tx, email, ip),
    };
  });
  const left = Math.min(tokenLeft, lockoutLeft);
  const next =
    left > 0
      ? `${left} more attempt${left === 1 ? "" : "s"} before ${lockoutLeft <= tokenLeft ? "sign-in locks" : "this MFA token dies"}`
      : lockoutLeft <= 0
        ? "sign-in is now locked for a while"
        : "sign in again";
  return new UnauthenticatedError(
    check === "reused" ? "mfa_code_reused" : "mfa_code_invalid",
    "invalid MFA code",
    `${check === "reused" ? "this code has already been used: wait for the next one" : "the code is not right"}; ${next}`,
  );
}

function malformedCode(message: string): ValidationError {
  return new ValidationError("invalid request body", [{ field: "code", message }]);
}
