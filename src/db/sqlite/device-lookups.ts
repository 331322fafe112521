/**
 * The reads every agent request makes, on SQLite: prepared once per connection, shaped for the planner
 * Bun ships (see prepared.ts). The domain calls these functions and never the statements.
 */
import { and, asc, desc, eq, type Placeholder, sql } from "drizzle-orm";
import type { Db, DbOrTx } from "../client";
import { devices, deviceTokens, wipes } from "../schema";
import { LIMIT_ONE, preparedRead, unplanned } from "./prepared";

// Every agent request: prepared once per database. The token hash is compared as an unplanned value:
// SQLite as Bun ships it plans a join with a bare bound value again at every execution (see
// unplanned in prepared.ts); one join reads the device once, where scalar subqueries read it per
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

/** The device token stored under this hash, with its device's id, organization and status. */
export function lookUpDeviceToken(db: Db, tokenHash: string) {
  return tokenLookup(db).get({ tokenHash });
}

/**
 * The device's pending wipes, oldest first: one range of wipes_device_status_idx, read in index order
 * (the check-in sends them all as commands; a wipe request refuses while there is one).
 */
export function selectPendingWipes(db: DbOrTx, deviceId: string | Placeholder) {
  // Compared as unplanned values: every check-in runs it (see unplanned in prepared.ts).
  return db
    .select()
    .from(wipes)
    .where(and(eq(wipes.deviceId, unplanned(deviceId)), eq(wipes.status, unplanned("pending"))))
    .orderBy(asc(wipes.initiatedAt));
}

// The device page's reads, prepared once per database: a fleet's dashboards and scripts call it most.
const deviceQuery = preparedRead((db: Db) =>
  db
    .select()
    .from(devices)
    .where(
      and(
        eq(devices.id, sql.placeholder("id")),
        eq(devices.organizationId, sql.placeholder("organizationId")),
      ),
    ),
);
/**
 * The device's newest wipe request: a console reloaded while one is pending keeps following it. Read
 * from the end of wipes_device_initiated_idx (a sort here cost more than the rest of the read), with
 * the device compared unplanned and a literal LIMIT 1 (see prepared.ts).
 */
export function selectLatestWipe(db: Db, deviceId: string | Placeholder) {
  return db
    .select()
    .from(wipes)
    .where(eq(wipes.deviceId, unplanned(deviceId)))
    .orderBy(desc(wipes.initiatedAt))
    .limit(LIMIT_ONE);
}
const latestWipeQuery = preparedRead((db: Db) => selectLatestWipe(db, sql.placeholder("deviceId")));

/** One device of the organization (its id in lower case), or undefined. */
export function lookUpDevice(db: Db, organizationId: string, deviceId: string) {
  return deviceQuery(db).get({ id: deviceId, organizationId });
}

/** The device's newest wipe request, or undefined. */
export function lookUpLatestWipe(db: Db, deviceId: string) {
  return latestWipeQuery(db).get({ deviceId });
}
