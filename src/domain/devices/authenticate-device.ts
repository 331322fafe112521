import { eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { oncePerDatabase } from "../../db/prepared";
import { devices, deviceTokens } from "../../db/schema";
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

// Every agent request: prepared once per database. The device's columns come through scalar subqueries
// with qualified names, not a join: SQLite as Bun ships it prepares a join that binds a parameter again
// at every execution (see authenticate.ts).
const tokenLookup = oncePerDatabase((db: Db) => {
  const deviceColumn = (column: string) =>
    sql.raw(`(SELECT devices.${column} FROM devices WHERE devices.id = device_tokens.device_id)`);
  return db
    .select({
      token: deviceTokens,
      device: {
        id: deviceColumn("id").mapWith(devices.id),
        organizationId: deviceColumn("organization_id").mapWith(devices.organizationId),
        status: deviceColumn("status").mapWith(devices.status),
      },
    })
    .from(deviceTokens)
    .where(eq(deviceTokens.tokenHash, sql.placeholder("tokenHash")))
    .prepare();
});

/** Resolves a device token; revoked, expired or wiped-device tokens are refused. */
export function authenticateDeviceToken(deps: DomainDeps, token: string): DevicePrincipal {
  const row = tokenLookup(deps.db).get({ tokenHash: hashSecret(token) });
  // A token whose device row is gone (a foreign key guards against it) is as unknown as no token.
  if (!row?.device.id) throw new UnauthenticatedError("device_token_invalid", "invalid device token");
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
