import { eq } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { firstRow } from "../../db/first-row";
import type { SIGN_IN_METHODS } from "../../db/schema/enums";
import { organizations, users } from "../../db/tables";
import { toIso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import { hashPassword, verifyPassword } from "../../lib/secrets";
import { recordAudit } from "../audit/record-audit";
import type { Actor } from "../deps";
import { UnauthenticatedError } from "../errors";
import type { MfaChallengeView } from "../mfa/mfa-view";
import { createSignInChallenge, MFA_TOKEN_TTL_SECONDS } from "../mfa/sign-in-challenge";
import { methodTypes } from "../mfa/user-factors";
import { normalizeEmail } from "../users/email";
import { passwordHashCost } from "../users/password-hash-cost";
import type { AuthDeps } from "./auth-deps";
import { insertSession, signTokenPair, type TokenPair } from "./issue-session";
import {
  clearPasswordAttempts,
  releasePasswordAttempt,
  reservePasswordAttempt,
  settleFailedPasswordAttempt,
} from "./login-throttle";
import type { Role } from "./scopes";

type SignInMethod = (typeof SIGN_IN_METHODS)[number];

// Verified against when the email is unknown, so both paths take the same time: made once per
// configured cost, since verifying costs what the hash was made with.
const dummyHashes = new Map<string, Promise<string>>();

function dummyHash(deps: AuthDeps): Promise<string> {
  const cost = passwordHashCost(deps);
  const key = `${cost.memoryKib}:${cost.iterations}`;
  let hash = dummyHashes.get(key);
  if (!hash) {
    hash = hashPassword("bulwark-timing-equaliser", cost);
    dummyHashes.set(key, hash);
  }
  return hash;
}

export interface SignedInUser {
  id: string;
  email: string;
  name: string;
  role: Role;
  organization_id: string;
}

/** The outcome of the password: tokens, or (for a user with a second factor) an MFA challenge. */
export type SignInResult =
  | { kind: "tokens"; tokens: TokenPair; user: SignedInUser; mfaSetupRequired?: boolean }
  | { kind: "mfa_required"; challenge: MfaChallengeView };

/** Password sign-in with the (email, ip) throttle and an audit row for every attempt. */
export async function signInWithPassword(
  deps: AuthDeps,
  input: { email: string; password: string; ip: string },
): Promise<SignInResult> {
  const email = normalizeEmail(input.email);
  await reservePasswordAttempt(deps, email, input.ip);
  const user = await firstRow(deps.db.select().from(users).where(eq(users.email, email)));
  const isPasswordCorrect = await verifyPassword(
    input.password,
    user?.passwordHash ?? (await dummyHash(deps)),
  );
  const anonymous: Actor = {
    type: "anonymous",
    id: null,
    label: email,
    organizationId: user?.organizationId ?? null,
    ip: input.ip,
  };
  const now = deps.clock.now();
  if (!user || !isPasswordCorrect || user.deletedAt) {
    await withTransaction(deps.db, async (tx) => {
      await settleFailedPasswordAttempt(deps, tx, email, input.ip);
      await recordAudit(tx, now, anonymous, {
        action: "auth.login",
        outcome: "failure",
        targetType: "user",
        targetId: user?.id ?? null,
        details: { reason: "invalid credentials" },
      });
    });
    throw new UnauthenticatedError("invalid_credentials", "invalid credentials");
  }
  if (user.isDisabled || user.isRestricted) {
    const reason = user.isDisabled ? "account disabled" : "account restricted";
    await withTransaction(deps.db, async (tx) => {
      // The password was right: no guess to count, so re-enabling the account is not followed by a lockout.
      await clearPasswordAttempts(tx, email, input.ip);
      await recordAudit(tx, now, anonymous, {
        action: "auth.login",
        outcome: "failure",
        targetType: "user",
        targetId: user.id,
        details: { reason },
      });
    });
    throw new UnauthenticatedError(user.isDisabled ? "account_disabled" : "account_restricted", reason);
  }
  if (user.mfaEnabled) return await challengeSecondFactor(deps, user, anonymous, input.ip);
  const requireMfa = (
    await firstRow(
      deps.db
        .select({ flag: organizations.requireMfa })
        .from(organizations)
        .where(eq(organizations.id, user.organizationId)),
    )
  )?.flag;
  return {
    kind: "tokens",
    tokens: await startSession(deps, user, input.ip, "password"),
    user: toSignedInUser(user),
    // Said at once, so a client can go straight to setup instead of meeting 403s.
    mfaSetupRequired: requireMfa === true,
  };
}

/**
 * The password was right and the user has a second factor: no tokens yet, an mfa_token instead. The
 * throttle is not cleared (wrong codes count on it, so signing in again must not wipe them); only this
 * attempt, which was no failure, is taken back.
 */
async function challengeSecondFactor(
  deps: AuthDeps,
  user: { id: string; email: string },
  actor: Actor,
  ip: string,
): Promise<SignInResult> {
  const now = deps.clock.now();
  const mfaToken = await withTransaction(deps.db, async (tx) => {
    await releasePasswordAttempt(tx, user.email, ip);
    await recordAudit(tx, now, actor, {
      action: "auth.mfa_challenge",
      targetType: "user",
      targetId: user.id,
    });
    return await createSignInChallenge(tx, user.id, now);
  });
  return {
    kind: "mfa_required",
    challenge: {
      mfa_required: true,
      mfa_token: mfaToken,
      mfa_methods: await methodTypes(deps.db, user.id),
      expires_in: MFA_TOKEN_TTL_SECONDS,
    },
  };
}

/** Opens a new session: stores it, signs the token pair, clears failures, audits the sign-in. */
export async function startSession(
  deps: AuthDeps,
  user: { id: string; email: string; role: Role; organizationId: string },
  ip: string,
  signInMethod: SignInMethod,
  /** More for the audit row (the SSO provider). */
  auditDetails: Record<string, unknown> = {},
): Promise<TokenPair> {
  const sessionId = newId();
  const signed = await signTokenPair(deps, user, sessionId);
  const now = deps.clock.now();
  await withTransaction(deps.db, async (tx) => {
    await insertSession(tx, now, { sessionId, userId: user.id, ip, signInMethod, signed });
    await clearPasswordAttempts(tx, user.email, ip);
    await tx
      .update(users)
      .set({ lastLoginAt: toIso(now) })
      .where(eq(users.id, user.id));
    await recordAudit(
      tx,
      now,
      { type: "user", id: user.id, label: user.email, organizationId: user.organizationId, ip },
      {
        action: "auth.login",
        targetType: "user",
        targetId: user.id,
        details: { session_id: sessionId, method: signInMethod, ...auditDetails },
      },
    );
  });
  return signed.pair;
}

export function toSignedInUser(user: {
  id: string;
  email: string;
  name: string;
  role: Role;
  organizationId: string;
}): SignedInUser {
  return {
    id: user.id,
    email: user.email,
    name: user.name,
    role: user.role,
    organization_id: user.organizationId,
  };
}
