/**
 * The hot statements the domain runs, for either store: each function runs the SQLite statement of
 * src/db/sqlite or the PostgreSQL one of src/db/pg/lookups.ts, by the store of the handle it is given.
 * On SQLite the answer comes back at once (a value; `await` takes it as it is); on PostgreSQL, as a
 * promise. The domain awaits every one and never sees a statement.
 */

import { desc, gt } from "drizzle-orm";
import type { Db, DbOrTx } from "./client";
import {
  ANCHOR_SPACING,
  type ListRow,
  selectDevicePageWithAnchors,
  warmUpAnchors,
} from "./device-page-anchors";
import { dialectOf } from "./dialect";
import { isPgUnavailable, sqlStateOf } from "./pg/client";
import { pgDevicePageStatements } from "./pg/device-page-statements";
import * as pg from "./pg/lookups";
import * as sqliteAuth from "./sqlite/auth-lookups";
import * as sqliteCheckIn from "./sqlite/check-in-statements";
import * as sqliteDevices from "./sqlite/device-lookups";
import { sqliteDevicePageStatements } from "./sqlite/device-page-statements";
import * as sqliteEvents from "./sqlite/event-log";
import * as sqliteOperational from "./sqlite/operational";
import * as sqlitePki from "./sqlite/pki-lookups";
import * as sqlitePolicies from "./sqlite/policy-lookups";
import { readTogether as sqliteReadTogether } from "./sqlite/read-together";
import * as sqliteSavepoint from "./sqlite/savepoint";
import { organizations } from "./tables";

export { SERVER_KEY_NAME } from "./sqlite/check-in-statements";

/** What a SQLite lookup returns, as a value or a promise of it. */
type Answer<F extends (...args: never[]) => unknown> =
  | Awaited<ReturnType<F>>
  | Promise<Awaited<ReturnType<F>>>;

const onPg = (db: DbOrTx) => dialectOf(db) === "postgresql";

/** The user of an access token's session, with the session's state and the organization's plan. */
export function lookUpSession(
  db: Db,
  sessionId: string,
  userId: string,
): Answer<typeof sqliteAuth.lookUpSession> {
  return onPg(db)
    ? (pg.lookUpSession(db, sessionId, userId) as never)
    : sqliteAuth.lookUpSession(db, sessionId, userId);
}

/** The API key stored under this hash. */
export function lookUpApiKey(db: Db, keyHash: string): Answer<typeof sqliteAuth.lookUpApiKey> {
  return onPg(db) ? (pg.lookUpApiKey(db, keyHash) as never) : sqliteAuth.lookUpApiKey(db, keyHash);
}

/** An API key's holder and the organization's plan. */
export function lookUpKeyHolder(db: Db, userId: string): Answer<typeof sqliteAuth.lookUpKeyHolder> {
  return onPg(db) ? (pg.lookUpKeyHolder(db, userId) as never) : sqliteAuth.lookUpKeyHolder(db, userId);
}

/** Until when (email, ip) is locked out of password sign-in, if it ever was. */
export function lookUpLockout(
  db: DbOrTx,
  email: string,
  ip: string,
): Answer<typeof sqliteAuth.lookUpLockout> {
  return onPg(db) ? (pg.lookUpLockout(db, email, ip) as never) : sqliteAuth.lookUpLockout(db, email, ip);
}

/** The device token stored under this hash, with its device's id, organization and status. */
export function lookUpDeviceToken(db: Db, tokenHash: string): Answer<typeof sqliteDevices.lookUpDeviceToken> {
  return onPg(db)
    ? (pg.lookUpDeviceToken(db, tokenHash) as never)
    : sqliteDevices.lookUpDeviceToken(db, tokenHash);
}

/** The device's pending wipes, oldest first (a query to await). */
export function selectPendingWipes(
  db: DbOrTx,
  deviceId: string,
): ReturnType<typeof sqliteDevices.selectPendingWipes> {
  return onPg(db)
    ? (pg.selectPendingWipes(db, deviceId) as never)
    : sqliteDevices.selectPendingWipes(db, deviceId);
}

/**
 * What the device page shows, read together: the device (its id in lower case), its newest wipe and
 * newest certificate, and the id of the policy it follows (null when that policy is gone); undefined
 * when the organization has no such device. One statement on PostgreSQL; on SQLite, four prepared
 * reads in one read transaction.
 */
export async function lookUpDevicePage(
  db: Db,
  organizationId: string,
  deviceId: string,
): Promise<
  | {
      device: NonNullable<Awaited<ReturnType<typeof sqliteDevices.lookUpDevice>>>;
      latestWipe: Awaited<ReturnType<typeof sqliteDevices.lookUpLatestWipe>>;
      certificate: Awaited<ReturnType<typeof sqlitePki.lookUpNewestCertificate>>;
      effectivePolicyId: string | null;
    }
  | undefined
> {
  if (onPg(db)) return (await pg.lookUpDevicePage(db, organizationId, deviceId)) as never;
  return await sqliteReadTogether(db, async () => {
    const device = sqliteDevices.lookUpDevice(db, organizationId, deviceId);
    if (!device) return undefined;
    const policy = sqlitePolicies.lookUpCurrentPolicyVersion(
      db,
      organizationId,
      device.policyId?.toLowerCase() ?? null,
    );
    return {
      device,
      latestWipe: sqliteDevices.lookUpLatestWipe(db, device.id),
      certificate: sqlitePki.lookUpNewestCertificate(db, device.id),
      effectivePolicyId: policy?.id ?? null,
    };
  });
}

/** The check-in rows of several devices (those found; in no particular order). */
export async function lookUpCheckInDevices(
  db: Db,
  deviceIds: readonly string[],
): Promise<NonNullable<Awaited<ReturnType<typeof sqliteCheckIn.lookUpCheckInDevice>>>[]> {
  if (onPg(db)) return (await pg.lookUpCheckInDevices(db, deviceIds, sqliteCheckIn.SERVER_KEY_NAME)) as never;
  return deviceIds.flatMap((deviceId) => sqliteCheckIn.lookUpCheckInDevice(db, deviceId) ?? []);
}

/** The pending wipes of several devices, each device's oldest first. */
export async function lookUpPendingWipesOf(
  db: Db,
  deviceIds: readonly string[],
): Promise<Awaited<ReturnType<typeof sqliteCheckIn.lookUpPendingWipes>>> {
  if (onPg(db)) return (await pg.lookUpPendingWipesOf(db, deviceIds)) as never;
  return deviceIds.flatMap((deviceId) => sqliteCheckIn.lookUpPendingWipes(db, deviceId));
}

/**
 * Writes the given columns of each device from its row (a check-in batch's devices): one statement
 * per set of columns on PostgreSQL, a prepared one per device on SQLite.
 */
export async function saveDevicesColumns(
  db: Db,
  saves: readonly {
    deviceId: string;
    columns: Parameters<typeof sqliteCheckIn.saveDeviceColumns>[2];
    row: Parameters<typeof sqliteCheckIn.saveDeviceColumns>[3];
  }[],
): Promise<void> {
  if (onPg(db)) return await pg.saveDevicesColumns(db, saves as never);
  for (const save of saves) sqliteCheckIn.saveDeviceColumns(db, save.deviceId, save.columns, save.row);
}

/** The certificate with this fingerprint, with its device's id, organization and status. */
export function lookUpCertificateHolder(
  db: Db,
  fingerprint: string,
): Answer<typeof sqlitePki.lookUpCertificateHolder> {
  return onPg(db)
    ? (pg.lookUpCertificateHolder(db, fingerprint) as never)
    : sqlitePki.lookUpCertificateHolder(db, fingerprint);
}

/** The policy a device follows (its own, else the organization's default) at its current version. */
export function lookUpCurrentPolicyVersion(
  db: Db,
  organizationId: string,
  policyId: string | null,
): Answer<typeof sqlitePolicies.lookUpCurrentPolicyVersion> {
  return onPg(db)
    ? (pg.lookUpCurrentPolicyVersion(db, organizationId, policyId) as never)
    : sqlitePolicies.lookUpCurrentPolicyVersion(db, organizationId, policyId);
}

/** A policy version's document. */
export function lookUpPolicyDocument(
  db: Db,
  policyId: string,
  version: number,
): Answer<typeof sqlitePolicies.lookUpPolicyDocument> {
  return onPg(db)
    ? (pg.lookUpPolicyDocument(db, policyId, version) as never)
    : sqlitePolicies.lookUpPolicyDocument(db, policyId, version);
}

/** Inserts an event (data as JSON text); returns its sequence. */
export function insertEventRow(
  ...args: Parameters<typeof sqliteEvents.insertEventRow>
): number | Promise<number> {
  return onPg(args[0]) ? pg.insertEventRow(...args) : sqliteEvents.insertEventRow(...args);
}

/** The organization's active webhooks that listen for `type` (or for every event). */
export function selectSubscribedWebhooks(
  ...args: Parameters<typeof sqliteEvents.selectSubscribedWebhooks>
): { id: string }[] | Promise<{ id: string }[]> {
  return onPg(args[0])
    ? pg.selectSubscribedWebhooks(...args)
    : sqliteEvents.selectSubscribedWebhooks(...args);
}

/** Queues a delivery, due at once. */
export function insertDeliveryRow(
  ...args: Parameters<typeof sqliteEvents.insertDeliveryRow>
): void | Promise<void> {
  return onPg(args[0]) ? pg.insertDeliveryRow(...args) : sqliteEvents.insertDeliveryRow(...args);
}

/** Appends a device log entry; its details are dropped when the device's user objected or is restricted. */
export function insertDeviceLogRow(
  ...args: Parameters<typeof sqliteEvents.insertDeviceLogRow>
): void | Promise<void> {
  return onPg(args[0]) ? pg.insertDeviceLogRow(...args) : sqliteEvents.insertDeviceLogRow(...args);
}

/** Appends several device log entries (insertDeviceLogRow's), in one statement on PostgreSQL. */
export async function insertDeviceLogRows(
  tx: DbOrTx,
  rows: readonly Parameters<typeof sqliteEvents.insertDeviceLogRow>[1][],
): Promise<void> {
  if (onPg(tx)) return await pg.insertDeviceLogRows(tx, rows);
  for (const row of rows) sqliteEvents.insertDeviceLogRow(tx, row);
}

/** Runs a trivial query; throws when the database does not answer. */
export function pingDatabase(db: DbOrTx): void | Promise<void> {
  return onPg(db) ? pg.pingDatabase(db) : sqliteOperational.pingDatabase(db);
}

/** The outbox's pending deliveries and those due now, with the oldest of each. */
export function countOutbox(db: Db, now: string): Answer<typeof sqliteOperational.countOutbox> {
  return onPg(db) ? (pg.countOutbox(db, now) as never) : sqliteOperational.countOutbox(db, now);
}

/** The size of an in-memory SQLite database, or of the PostgreSQL database. */
export function databaseBytes(db: DbOrTx): number | Promise<number> {
  return onPg(db) ? pg.databaseBytes(db) : sqliteOperational.databaseBytesInMemory(db);
}

/** Runs `work` in a savepoint of the transaction `tx`: on failure its writes are undone and `tx` goes on. */
export function inSavepoint<T>(tx: DbOrTx, work: () => Promise<T>): Promise<T> {
  return onPg(tx) ? pg.inSavepoint(tx, work) : sqliteSavepoint.inSavepoint(tx, work);
}

/**
 * Whether `error`, met inside a savepoint of `tx`, ended the whole transaction: on SQLite a disk-full or
 * I/O error rolls it back; on PostgreSQL a serialization failure or deadlock (the transaction is run
 * again) or a lost connection does.
 */
export function endsTransaction(tx: DbOrTx, error: unknown): boolean {
  if (!onPg(tx)) return !sqliteSavepoint.isInTransaction(tx);
  return sqlStateOf(error)?.startsWith("40") === true || isPgUnavailable(error);
}

/** One page of the organization's devices, newest enrolled first, and how many it has (read from anchors). */
export function selectUnfilteredDevicePage(
  db: Db,
  organizationId: string,
  page: { page: number; pageSize: number },
): Promise<{ rows: ListRow[]; total: number }> {
  const statements = onPg(db) ? pgDevicePageStatements(db) : sqliteDevicePageStatements(db);
  return selectDevicePageWithAnchors(db, statements, organizationId, page);
}

/**
 * Finds and keeps the deep-page anchors of the organizations with the most devices (more than
 * ANCHOR_SPACING), in the background after a start: see warmUpAnchors.
 */
export async function warmUpUnfilteredDevicePages(db: Db): Promise<void> {
  const statements = onPg(db) ? pgDevicePageStatements(db) : sqliteDevicePageStatements(db);
  const largest = await db
    .select({ id: organizations.id })
    .from(organizations)
    .where(gt(organizations.deviceCount, ANCHOR_SPACING))
    .orderBy(desc(organizations.deviceCount));
  await warmUpAnchors(
    db,
    statements,
    largest.map((organization) => organization.id),
  );
}

/**
 * Runs `work`, a handful of reads: on SQLite in one read transaction, so that they see one snapshot and
 * take the WAL read lock once rather than per statement; on PostgreSQL as they come, each on the pool.
 */
export async function readConsistently<T>(db: Db, work: () => Promise<T>): Promise<T> {
  return onPg(db) ? await work() : await sqliteReadTogether(db, work);
}
