import { lookUpDeviceToken } from "../../db/lookups";
import { toIso } from "../../lib/clock";
import { hashSecret } from "../../lib/secrets";
import type { DomainDeps } from "../deps";
import { UnauthenticatedError } from "../errors";

export const DEVICE_TOKEN_PREFIX = "bwd_";

/** An agent authenticated by its device token or its device certificate. */
export interface DevicePrincipal {
  deviceId: string;
  organizationId: string;
  credential: { type: "token" | "certificate"; id: string };
}

/** Resolves a device token; revoked, expired or wiped-device tokens are refused. */
export async function authenticateDeviceToken(deps: DomainDeps, token: string): Promise<DevicePrincipal> {
  const row = await lookUpDeviceToken(deps.db, hashSecret(token));
  if (!row) throw new UnauthenticatedError("device_token_invalid", "invalid device token");
  if (row.token.revokedAt)
    throw new UnauthenticatedError(
      "device_token_revoked",
      "invalid device token",
      "the device token has been revoked",
    );
  if (row.token.expiresAt <= toIso(deps.clock.now()))
    throw new UnauthenticatedError(
      "device_token_expired",
      "invalid device token",
      "the device token has expired",
    );
  if (row.device.status === "wiped")
    throw new UnauthenticatedError("device_wiped", "invalid device token", "the device has been wiped");
  return {
    deviceId: row.device.id,
    organizationId: row.device.organizationId,
    credential: { type: "token", id: row.token.id },
  };
}
