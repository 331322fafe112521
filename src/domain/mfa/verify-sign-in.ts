import { and, eq, isNotNull } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { mfaMethods, users } from "../../db/schema";
import { recordAudit } from "../audit/record-audit";
import type { AuthDeps } from "../auth/auth-deps";
import { reservePasswordAttempt, settleFailedPasswordAttempt } from "../auth/login-throttle";
import { type SignInResult, startSession, toSignedInUser } from "../auth/sign-in";
import type { Actor } from "../deps";
import { UnauthenticatedError } from "../errors";
import type { MfaVerifyMethod } from "./mfa-view";
import { consumeRecoveryCode, remainingRecoveryCodes } from "./recovery-codes";
import {
  countWrongCode,
  findLiveSignInChallenge,
  MFA_TOKEN_MAX_FAILURES,
  useSignInChallenge,
} from "./sign-in-challenge";
import { type CodeCheck, checkTotpCode, readTotpSecret } from "./totp";
import { checkAssertion, notEnrolled, parseAssertion, webauthnAuthenticationOptions } from "./webauthn";

/** WebAuthn request options for the sign-in of `mfaToken`. */
export function signInAuthenticationOptions(deps: AuthDeps, mfaToken: string) {
  const challenge = findLiveSignInChallenge(deps.db, mfaToken, deps.clock.now());
  return webauthnAuthenticationOptions(deps, challenge);
}

/**
 * The second step of a sign-in: the mfa_token and one code of a factor the user has. A right code ends
 * as a password sign-in does (tokens and user); a wrong one counts against the token (5 and it dies)
 * and against the (email, address) sign-in throttle, like a wrong password.
 */
export async function verifySecondFactor(
  deps: AuthDeps,
  input: { mfaToken: string; method: MfaVerifyMethod; code: string; ip: string },
): Promise<Extract<SignInResult, { kind: "tokens" }>> {
  const now = deps.clock.now();
  const challenge = findLiveSignInChallenge(deps.db, input.mfaToken, now);
  const user = deps.db.select().from(users).where(eq(users.id, challenge.userId)).get();
  if (!user || user.deletedAt || user.isDisabled || user.isRestricted)
    throw new UnauthenticatedError(
      "mfa_token_invalid",
      "invalid or expired MFA token",
      "the account cannot sign in",
    );
  const actor: Actor = {
    type: "anonymous",
    id: null,
    label: user.email,
    organizationId: user.organizationId,
    ip: input.ip,
  };
  // Mistakes of form are answered before anything is counted: they cannot succeed, so they guess nothing.
  const totp =
    input.method === "totp"
      ? deps.db
          .select()
          .from(mfaMethods)
          .where(
            and(
              eq(mfaMethods.userId, user.id),
              eq(mfaMethods.type, "totp"),
              isNotNull(mfaMethods.confirmedAt),
            ),
          )
          .get()
      : undefined;
  if (input.method === "totp" && !totp) throw notEnrolled("totp");
  if (totp?.secret) readTotpSecret(deps.secrets, totp.secret);
  const assertion = input.method === "webauthn" ? parseAssertion(input.code) : undefined;
  reservePasswordAttempt(deps, user.email, input.ip);

  let check: CodeCheck;
  if (totp) check = await checkTotpCode(deps, totp, input.code);
  else if (assertion) check = await checkAssertion(deps, challenge, assertion);
  else check = consumeRecoveryCode(deps.db, deps.secrets, user.id, input.code, now) ? "accepted" : "invalid";

  if (check !== "accepted" || !useSignInChallenge(deps.db, challenge.id, now)) {
    const failures = withTransaction(deps.db, (tx) => {
      const count = countWrongCode(tx, challenge.id);
      settleFailedPasswordAttempt(deps, tx, user.email, input.ip);
      recordAudit(tx, now, actor, {
        action: "auth.mfa_verify",
        outcome: "failure",
        targetType: "user",
        targetId: user.id,
        details: { method: input.method, reason: check === "reused" ? "code already used" : "wrong code" },
      });
      return count;
    });
    const left = MFA_TOKEN_MAX_FAILURES - failures;
    throw new UnauthenticatedError(
      check === "reused" ? "mfa_code_reused" : "mfa_code_invalid",
      "invalid MFA code",
      `${check === "reused" ? "this code has already been used: wait for the next one" : "the code is not right"}; ${
        left > 0 ? `${left} more attempt${left === 1 ? "" : "s"} with this MFA token` : "sign in again"
      }`,
    );
  }
  recordAudit(deps.db, now, actor, {
    action: "auth.mfa_verify",
    targetType: "user",
    targetId: user.id,
    details: {
      method: input.method,
      ...(input.method === "recovery_code"
        ? { recovery_codes_remaining: remainingRecoveryCodes(deps.db, user.id) }
        : {}),
    },
  });
  const tokens = await startSession(deps, user, input.ip, "mfa");
  return { kind: "tokens", tokens, user: toSignedInUser(user) };
}
