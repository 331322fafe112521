import { and, eq, gt, isNull } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { smallerOf } from "../../db/dialect";
import { deviceTokens } from "../../db/tables";
import { addSeconds, toIso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import { generateSecret, hashSecret } from "../../lib/secrets";
import { recordAudit } from "../audit/record-audit";
import type { Actor, DomainDeps } from "../deps";
import { DEVICE_TOKEN_PREFIX, type DevicePrincipal } from "./authenticate-device";
import { DEVICE_TOKEN_LIFETIME_SECONDS } from "./enroll-device";

/**
 * How long the device's earlier tokens keep working after a rotation: an answer lost on the network
 * must not strand the agent, which retries with the token it has.
 */
export const ROTATED_TOKEN_GRACE_SECONDS = 300;

/** The answer to a rotation: the new device token, shown once. */
export interface RotatedDeviceToken {
  device_token: string;
  device_token_expires_at: string;
  /** Until when the earlier tokens still work. */
  previous_tokens_expire_at: string;
}

/**
 * Issues the device a new device token (valid a year, as at enrollment) and ends its earlier ones
 * after a grace period: every other token in force now expires within ROTATED_TOKEN_GRACE_SECONDS
 * (sooner if it already did). A rotation retried with the old token after a lost answer thus leaves
 * one token in force once the grace is over. Audited as `device.token_rotate`.
 */
export async function rotateDeviceToken(
  deps: DomainDeps,
  actor: Actor,
  caller: DevicePrincipal,
): Promise<RotatedDeviceToken> {
  const now = deps.clock.now();
  const timestamp = toIso(now);
  const graceEnd = toIso(addSeconds(now, ROTATED_TOKEN_GRACE_SECONDS));
  const token = generateSecret(32, DEVICE_TOKEN_PREFIX);
  const expiresAt = toIso(addSeconds(now, DEVICE_TOKEN_LIFETIME_SECONDS));
  return await withTransaction(deps.db, async (tx) => {
    const shortened = (
      await tx
        .update(deviceTokens)
        .set({ expiresAt: smallerOf(tx, deviceTokens.expiresAt, graceEnd) })
        .where(
          and(
            eq(deviceTokens.deviceId, caller.deviceId),
            isNull(deviceTokens.revokedAt),
            gt(deviceTokens.expiresAt, timestamp),
          ),
        )
        .returning({ id: deviceTokens.id })
    ).length;
    await tx.insert(deviceTokens).values({
      id: newId(),
      deviceId: caller.deviceId,
      tokenHash: hashSecret(token),
      expiresAt,
      revokedAt: null,
      createdAt: timestamp,
    });
    await recordAudit(tx, now, actor, {
      action: "device.token_rotate",
      targetType: "device",
      targetId: caller.deviceId,
      details: {
        credential: caller.credential.type,
        device_token_expires_at: expiresAt,
        previous_tokens: shortened,
        previous_tokens_expire_at: graceEnd,
      },
    });
    return { device_token: token, device_token_expires_at: expiresAt, previous_tokens_expire_at: graceEnd };
  });
}
