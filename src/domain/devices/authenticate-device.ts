import { eq, sql } from "drizzle-orm";
import type { Db } from "../../db/client";
import { preparedRead, unplanned } from "../../db/prepared";
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

// Every agent request: prepared once per database. The token hash is compared as an unplanned value:
// SQLite as Bun ships it plans a join with a bare bound value again at every execution (see
// unplanned in db/prepared.ts); one join reads the device once, where scalar subqueries read it per
// column.
const tokenLookup = preparedRead((db: Db) =>
  db
    .select({
      token: deviceTokens,
      device: { id: devices.id, organizationId: devices.organizationId, status: devices.status },
    })
    .from(deviceTokens)
    .innerJoin(devices, eq(devices.id, deviceTokens.deviceId))
    .where(eq(deviceTokens.tokenHash, unplanned(sql.placeholder("tokenHash")))),
);

/** Resolves a device token; revoked, expired or wiped-device tokens are refused. */
export function authenticateDeviceToken(deps: DomainDeps, token: string): DevicePrincipal {
  const row = tokenLookup(deps.db).get({ tokenHash: hashSecret(token) });
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
