/**
 * The hot reads and writes of src/db/sqlite (the session, API key, device token and certificate lookups,
 * the device page, effective policy, check-in row, outbox, event log), on PostgreSQL: the same results,
 * written as PostgreSQL wants them (joins rather than SQLite's planner workarounds, jsonb operators). Each
 * runs on the handle it is given, so inside the transaction that handle belongs to.
 */
import { and, asc, count, desc, eq, getTableColumns, lte, min, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/pg-core";
import type { Db, DbOrTx } from "../client";
import {
  apiKeys,
  deviceCertificates,
  devices,
  deviceTokens,
  loginFailures,
  organizations,
  policies,
  policyVersions,
  sessions,
  users,
  webhookDeliveries,
  webhooks,
  wipes,
} from "../schema-pg";

/** A PostgreSQL handle as Drizzle types it, for the handle the domain passes (typed as SQLite's). */
type PgDb = import("drizzle-orm/bun-sql").BunSQLDatabase<typeof import("../schema-pg")>;
const pg = (db: DbOrTx) => db as unknown as PgDb;

async function first<T>(rows: Promise<T[]> | T[]): Promise<T | undefined> {
  return (await rows)[0];
}

// --- authentication (src/db/sqlite/auth-lookups.ts)

export function lookUpSession(db: Db, sessionId: string, userId: string) {
  return first(
    pg(db)
      .select({
        user: users,
        plan: organizations.plan,
        requireMfa: organizations.requireMfa,
        sessionRevokedAt: sessions.revokedAt,
        signInMethod: sessions.signInMethod,
        sessionUserId: sessions.userId,
      })
      .from(users)
      .innerJoin(organizations, eq(organizations.id, users.organizationId))
      .leftJoin(sessions, eq(sessions.id, sessionId))
      .where(eq(users.id, userId))
      .limit(1),
  );
}

export function lookUpApiKey(db: Db, keyHash: string) {
  return first(pg(db).select().from(apiKeys).where(eq(apiKeys.keyHash, keyHash)).limit(1));
}

export function lookUpKeyHolder(db: Db, userId: string) {
  return first(
    pg(db)
      .select({ user: users, plan: organizations.plan })
      .from(users)
      .innerJoin(organizations, eq(organizations.id, users.organizationId))
      .where(eq(users.id, userId))
      .limit(1),
  );
}

export function lookUpLockout(db: DbOrTx, email: string, ip: string) {
  return first(
    pg(db)
      .select({ lockedUntil: loginFailures.lockedUntil })
      .from(loginFailures)
      .where(and(eq(loginFailures.email, email), eq(loginFailures.ip, ip)))
      .limit(1),
  );
}

// --- devices (src/db/sqlite/device-lookups.ts)

export function lookUpDeviceToken(db: Db, tokenHash: string) {
  return first(
    pg(db)
      .select({
        token: deviceTokens,
        device: { id: devices.id, organizationId: devices.organizationId, status: devices.status },
      })
      .from(deviceTokens)
      .innerJoin(devices, eq(devices.id, deviceTokens.deviceId))
      .where(eq(deviceTokens.tokenHash, tokenHash))
      .limit(1),
  );
}

export function selectPendingWipes(db: DbOrTx, deviceId: string) {
  return pg(db)
    .select()
    .from(wipes)
    .where(and(eq(wipes.deviceId, deviceId), eq(wipes.status, "pending")))
    .orderBy(asc(wipes.initiatedAt));
}

export function lookUpDevice(db: Db, organizationId: string, deviceId: string) {
  return first(
    pg(db)
      .select()
      .from(devices)
      .where(and(eq(devices.id, deviceId), eq(devices.organizationId, organizationId)))
      .limit(1),
  );
}

export function lookUpLatestWipe(db: Db, deviceId: string) {
  return first(
    pg(db).select().from(wipes).where(eq(wipes.deviceId, deviceId)).orderBy(desc(wipes.initiatedAt)).limit(1),
  );
}

// --- the check-in (src/db/sqlite/check-in-statements.ts)

export function lookUpCheckInDevice(db: Db, deviceId: string, serverKeyName: string) {
  return first(
    pg(db)
      .select({
        ...getTableColumns(devices),
        organizationSubnet: sql<
          string | null
        >`(SELECT organizations.vpn_subnet FROM organizations WHERE organizations.id = ${devices.organizationId})`,
        storedServerPublicKey: sql<
          string | null
        >`(SELECT server_keys.public_key FROM server_keys WHERE server_keys.name = ${serverKeyName})`,
      })
      .from(devices)
      .where(eq(devices.id, deviceId))
      .limit(1),
  );
}

export async function lookUpPendingWipes(db: Db, deviceId: string) {
  return await selectPendingWipes(db, deviceId);
}

/** A savepoint, as raw SQL on the transaction's connection (the check-in batcher's, one per check-in). */
export async function inSavepoint<T>(tx: DbOrTx, work: () => Promise<T>): Promise<T> {
  await pg(tx).execute(sql`SAVEPOINT check_in`);
  try {
    const result = await work();
    await pg(tx).execute(sql`RELEASE SAVEPOINT check_in`);
    return result;
  } catch (error) {
    await pg(tx).execute(sql`ROLLBACK TO SAVEPOINT check_in`);
    await pg(tx).execute(sql`RELEASE SAVEPOINT check_in`);
    throw error;
  }
}

export async function saveDeviceColumns(
  db: Db,
  deviceId: string,
  columns: readonly string[],
  row: Record<string, unknown>,
): Promise<void> {
  const values: Record<string, unknown> = {};
  for (const column of columns) values[column] = row[column];
  await pg(db).update(devices).set(values).where(eq(devices.id, deviceId));
}

// --- certificates (src/db/sqlite/pki-lookups.ts)

export function lookUpNewestCertificate(db: Db, deviceId: string) {
  return first(
    pg(db)
      .select()
      .from(deviceCertificates)
      .where(eq(deviceCertificates.deviceId, deviceId))
      .orderBy(desc(deviceCertificates.createdAt), desc(deviceCertificates.id))
      .limit(1),
  );
}

export function lookUpCertificateHolder(db: Db, fingerprint: string) {
  return first(
    pg(db)
      .select({
        certificate: {
          id: deviceCertificates.id,
          notBefore: deviceCertificates.notBefore,
          expiresAt: deviceCertificates.expiresAt,
          revokedAt: deviceCertificates.revokedAt,
        },
        device: { id: devices.id, organizationId: devices.organizationId, status: devices.status },
      })
      .from(deviceCertificates)
      .innerJoin(devices, eq(devices.id, deviceCertificates.deviceId))
      .where(eq(deviceCertificates.fingerprint, fingerprint))
      .limit(1),
  );
}

// --- policies (src/db/sqlite/policy-lookups.ts)

export function lookUpCurrentPolicyVersion(db: Db, organizationId: string, policyId: string | null) {
  const defaultPolicyId = sql<
    string | null
  >`(SELECT organizations.default_policy_id FROM organizations WHERE organizations.id = ${organizationId})`;
  return first(
    pg(db)
      .select({
        id: policies.id,
        name: policies.name,
        version: policies.currentVersion,
        changedAt: policyVersions.changedAt,
        defaultPolicyId,
      })
      .from(policies)
      .innerJoin(
        policyVersions,
        and(eq(policyVersions.policyId, policies.id), eq(policyVersions.version, policies.currentVersion)),
      )
      .where(
        and(
          eq(policies.organizationId, organizationId),
          eq(policies.id, sql`coalesce(${policyId}::text, ${defaultPolicyId})`),
        ),
      )
      .limit(1),
  );
}

export function lookUpPolicyDocument(db: Db, policyId: string, version: number) {
  return first(
    pg(db)
      .select({ policyData: policyVersions.policyData })
      .from(policyVersions)
      .where(and(eq(policyVersions.policyId, policyId), eq(policyVersions.version, version)))
      .limit(1),
  );
}

// --- the outbox and the device log (src/db/sqlite/event-log.ts)

export async function insertEventRow(
  tx: DbOrTx,
  row: { id: string; organizationId: string; type: string; data: string; createdAt: string },
): Promise<number> {
  const [inserted] = (await pg(tx).execute(sql`
    INSERT INTO events (id, organization_id, type, data, created_at)
    VALUES (${row.id}, ${row.organizationId}, ${row.type}, ${row.data}::text::json, ${row.createdAt})
    RETURNING sequence`)) as unknown as { sequence: number | string }[];
  if (!inserted) throw new Error("INSERT ... RETURNING gave no row");
  return Number(inserted.sequence);
}

export async function selectSubscribedWebhooks(
  tx: DbOrTx,
  organizationId: string,
  type: string,
): Promise<{ id: string }[]> {
  return [
    ...((await pg(tx).execute(sql`
      SELECT w.id FROM webhooks w
      WHERE w.organization_id = ${organizationId} AND w.is_active
        AND (w.events::jsonb ? '*' OR w.events::jsonb ? ${type})`)) as unknown as { id: string }[]),
  ];
}

export async function insertDeliveryRow(
  tx: DbOrTx,
  row: { id: string; webhookId: string; eventSequence: number; createdAt: string },
): Promise<void> {
  await pg(tx).execute(sql`
    INSERT INTO webhook_deliveries
      (id, webhook_id, event_sequence, status, attempts, next_attempt_at, created_at, updated_at)
    VALUES (${row.id}, ${row.webhookId}, ${row.eventSequence}, 'pending', 0, ${row.createdAt}, ${row.createdAt}, ${row.createdAt})`);
}

export async function insertDeviceLogRow(
  tx: DbOrTx,
  row: { id: string; deviceId: string; event: string; details: string; createdAt: string },
): Promise<void> {
  await pg(tx).execute(sql`
    INSERT INTO device_logs (id, device_id, event, details, created_at)
    SELECT ${row.id}, ${row.deviceId}, ${row.event},
      CASE WHEN EXISTS (
        SELECT 1 FROM users u JOIN devices d ON d.user_id = u.id
        WHERE d.id = ${row.deviceId} AND (u.is_restricted OR u.device_activity_objected_at IS NOT NULL)
      ) THEN '{}'::json ELSE ${row.details}::text::json END,
      ${row.createdAt}::timestamptz`);
}

// --- operations (src/db/sqlite/operational.ts)

export async function pingDatabase(db: DbOrTx): Promise<void> {
  await pg(db).execute(sql`SELECT 1`);
}

export async function countOutbox(db: Db, now: string) {
  const queued = alias(webhookDeliveries, "queued");
  const headOfQueue = pg(db)
    .select({ sequence: min(queued.eventSequence) })
    .from(queued)
    .where(and(eq(queued.webhookId, webhookDeliveries.webhookId), eq(queued.status, "pending")));
  const [pending, due] = await Promise.all([
    first(
      pg(db)
        .select({ count: count(), oldest: min(webhookDeliveries.createdAt) })
        .from(webhookDeliveries)
        .where(eq(webhookDeliveries.status, "pending")),
    ),
    first(
      pg(db)
        .select({ count: count(), oldest: min(webhookDeliveries.nextAttemptAt) })
        .from(webhookDeliveries)
        .innerJoin(webhooks, eq(webhooks.id, webhookDeliveries.webhookId))
        .where(
          and(
            eq(webhookDeliveries.status, "pending"),
            eq(webhooks.isActive, true),
            lte(webhookDeliveries.nextAttemptAt, now),
            eq(webhookDeliveries.eventSequence, headOfQueue),
          ),
        ),
    ),
  ]);
  return { pending, due };
}

export async function databaseBytes(db: DbOrTx): Promise<number> {
  const [row] = (await pg(db).execute(
    sql`SELECT pg_database_size(current_database()) AS bytes`,
  )) as unknown as { bytes: number | string }[];
  return Number(row?.bytes ?? 0);
}
