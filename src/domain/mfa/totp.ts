import { and, eq, isNull, lt, or } from "drizzle-orm";
import { generateSecret, generateURI, verify } from "otplib";
import { renderSVG } from "uqr";
import { type DbOrTx, withTransaction } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { mfaMethods } from "../../db/tables";
import { toIso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import { type SecretBox, SecretBoxError } from "../../lib/secret-box";
import { recordAudit } from "../audit/record-audit";
import type { Principal } from "../auth/principal";
import type { Actor, DomainDeps } from "../deps";
import { ConflictError, UnavailableError, ValidationError } from "../errors";
import { findLiveUser } from "../users/user-view";
import { issueRecoveryCodes } from "./recovery-codes";
import { confirmedMethods, syncMfaEnabled } from "./user-factors";

const ISSUER = "Bulwark";
const PERIOD_SECONDS = 30;

export type CodeCheck = "accepted" | "invalid" | "reused";

/**
 * Starts TOTP enrolment: a new secret, its otpauth URL and a QR code of it. Nothing is enabled until the
 * first code is confirmed; a second call replaces an enrolment still waiting for its code.
 */
export async function startTotpEnrolment(
  deps: DomainDeps,
  principal: Principal,
  actor: Actor,
  name = "Authenticator app",
): Promise<{ secret: string; otpauth_url: string; qr_svg: string }> {
  const user = await findLiveUser(deps.db, principal.organizationId, principal.userId);
  const secret = generateSecret();
  const otpauthUrl = generateURI({ issuer: ISSUER, label: user.email, secret });
  const now = deps.clock.now();
  await withTransaction(deps.db, async (tx) => {
    if ((await confirmedMethods(tx, user.id)).some((method) => method.type === "totp"))
      throw new ConflictError(
        "totp_already_enabled",
        "an authenticator app is already set up",
        "remove it first (DELETE /api/v1/auth/mfa/{method_id}) to set up another",
      );
    await tx
      .delete(mfaMethods)
      .where(
        and(eq(mfaMethods.userId, user.id), eq(mfaMethods.type, "totp"), isNull(mfaMethods.confirmedAt)),
      );
    await tx.insert(mfaMethods).values({
      id: newId(),
      userId: user.id,
      type: "totp",
      name,
      secret: deps.secrets.seal(secret),
      createdAt: toIso(now),
    });
    await recordAudit(tx, now, actor, { action: "mfa.totp_enrol", targetType: "user", targetId: user.id });
  });
  // A quiet zone of 4 modules, as the QR specification asks: phone cameras read it more reliably.
  return { secret, otpauth_url: otpauthUrl, qr_svg: renderSVG(otpauthUrl, { border: 4 }) };
}

/** Confirms a TOTP enrolment with its first code; recovery codes come with it when MFA turns on. */
export async function confirmTotp(
  deps: DomainDeps,
  principal: Principal,
  actor: Actor,
  code: string,
): Promise<{ enabled: true; recovery_codes?: string[] }> {
  const pending = await firstRow(
    deps.db
      .select()
      .from(mfaMethods)
      .where(
        and(
          eq(mfaMethods.userId, principal.userId),
          eq(mfaMethods.type, "totp"),
          isNull(mfaMethods.confirmedAt),
        ),
      ),
  );
  if (
    !pending &&
    (await confirmedMethods(deps.db, principal.userId)).some((method) => method.type === "totp")
  )
    throw new ConflictError(
      "totp_already_enabled",
      "the authenticator app is already confirmed",
      "nothing to confirm: start a new enrolment only after removing the app",
    );
  if (!pending)
    throw new ConflictError(
      "totp_enrolment_missing",
      "no authenticator app is waiting to be confirmed",
      "start with POST /api/v1/auth/mfa/totp",
    );
  const check = await checkTotpCode(deps, pending, code);
  const now = deps.clock.now();
  if (check !== "accepted") {
    await withTransaction(
      deps.db,
      async (tx) =>
        await recordAudit(tx, now, actor, {
          action: "mfa.totp_confirm",
          outcome: "failure",
          targetType: "user",
          targetId: principal.userId,
        }),
    );
    throw new ValidationError(
      "invalid MFA code",
      [{ field: "code", message: "is not the current code of the authenticator app" }],
      "check that the phone's clock is right, then type the code shown now",
      "mfa_code_invalid",
    );
  }
  return await withTransaction(deps.db, async (tx) => {
    // The enrolment the code was checked against may have been replaced (a new POST /totp) or
    // confirmed meanwhile: only a row still waiting is confirmed.
    const confirmed = await tx
      .update(mfaMethods)
      .set({ confirmedAt: toIso(now), lastUsedAt: toIso(now) })
      .where(and(eq(mfaMethods.id, pending.id), isNull(mfaMethods.confirmedAt)))
      .returning({ id: mfaMethods.id });
    if (confirmed.length === 0)
      throw new ConflictError(
        "totp_enrolment_missing",
        "no authenticator app is waiting to be confirmed",
        "the enrolment was replaced or confirmed meanwhile: start again with POST /api/v1/auth/mfa/totp",
      );
    const { wasEnabled } = await syncMfaEnabled(tx, principal.userId);
    await recordAudit(tx, now, actor, {
      action: "mfa.totp_confirm",
      targetType: "user",
      targetId: principal.userId,
      details: { method_id: pending.id },
    });
    return wasEnabled
      ? { enabled: true as const }
      : {
          enabled: true as const,
          recovery_codes: await issueRecoveryCodes(tx, deps.secrets, principal.userId, now),
        };
  });
}

/**
 * The plaintext of a sealed TOTP secret; a 503 (not a wrong code counted against the user) when the key
 * file beside the database is not the one it was sealed with, as after restoring a backup without it.
 */
export function readTotpSecret(secrets: SecretBox, sealed: string): string {
  try {
    return secrets.open(sealed);
  } catch (error) {
    if (!(error instanceof SecretBoxError)) throw error;
    throw new UnavailableError(
      "totp_secret_unreadable",
      "the authenticator app cannot be checked",
      "its secret was sealed with another key file than this server's (recovery codes are keyed from that file too): sign in with a passkey, or ask an administrator to reset your factors (DELETE /api/v1/users/{id}/mfa)",
    );
  }
}

/**
 * Checks a code against a TOTP method (RFC 6238: SHA-1, 6 digits, 30 s, one step of drift either way).
 * Each time step is accepted once: the step is recorded only if it is newer than the last one, in one
 * conditional update, so two requests racing with the same code cannot both pass.
 */
export async function checkTotpCode(
  deps: { db: DbOrTx; secrets: SecretBox; clock: DomainDeps["clock"] },
  method: { id: string; secret: string | null; lastTimeStep: number | null },
  code: string,
): Promise<CodeCheck> {
  const token = code.replace(/\s/g, "");
  if (!method.secret || !/^\d{6}$/.test(token)) return "invalid";
  const now = deps.clock.now();
  const epoch = Math.floor(now.getTime() / 1000);
  const result = await verify({
    secret: readTotpSecret(deps.secrets, method.secret),
    token,
    epoch,
    epochTolerance: PERIOD_SECONDS,
  });
  if (!result.valid) return "invalid";
  const timeStep = Math.floor(epoch / PERIOD_SECONDS) + result.delta;
  const recorded = await withTransaction(
    deps.db,
    async (tx) =>
      await tx
        .update(mfaMethods)
        .set({ lastTimeStep: timeStep, lastUsedAt: toIso(now) })
        .where(
          and(
            eq(mfaMethods.id, method.id),
            or(isNull(mfaMethods.lastTimeStep), lt(mfaMethods.lastTimeStep, timeStep)),
          ),
        )
        .returning({ id: mfaMethods.id }),
  );
  return recorded.length === 1 ? "accepted" : "reused";
}
