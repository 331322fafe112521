/**
 * The hot reads and writes of src/db/sqlite (the session, API key, device token and certificate lookups,
 * the device page, effective policy, check-in row, outbox, event log), on PostgreSQL: the same results,
 * written as PostgreSQL wants them (joins rather than SQLite's planner workarounds, jsonb operators). Each
 * runs on the handle it is given, so inside the transaction that handle belongs to.
 */
import {
  type AnyColumn,
  and,
  asc,
  count,
  desc,
  eq,
  getTableColumns,
  lte,
  min,
  type SQL,
  sql,
} from "drizzle-orm";
import { alias, type PgSession, type PgTable } from "drizzle-orm/pg-core";
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
import { coalesced } from "./coalesce";

/** A PostgreSQL handle as Drizzle types it, for the handle the domain passes (typed as SQLite's). */
type PgDb = import("drizzle-orm/bun-sql").BunSQLDatabase<typeof import("../schema-pg")>;
const pg = (db: DbOrTx) => db as unknown as PgDb;

async function first<T>(rows: Promise<T[]> | T[]): Promise<T | undefined> {
  return (await rows)[0];
}

/** What Drizzle keeps of a built query (its prepared query's fields, not in its types). */
interface BuiltQuery {
  queryString: string;
  params: unknown[];
  fields: Parameters<PgSession["prepareQuery"]>[1];
  joinsNotNullableMap: Record<string, boolean> | undefined;
}

/**
 * A query whose SQL Drizzle builds once, with `sql.placeholder`s for its values, then runs on whichever
 * handle it is given (the pool, or a transaction's connection) with the values of the call. Drizzle
 * otherwise builds a query's SQL text again on every call, which was most of the CPU a PostgreSQL
 * request took in Bulwark's process.
 */
function builtOnce<Values extends Record<string, unknown>, Result>(
  name: string,
  build: (db: PgDb) => { prepare(name: string): { execute(values?: Values): Promise<Result> } },
): (db: DbOrTx, values: Values) => Promise<Result> {
  let built: BuiltQuery | undefined;
  return (db, values) => {
    const handle = pg(db);
    built ??= build(handle).prepare(name) as unknown as BuiltQuery;
    const { session } = handle as unknown as { session: PgSession };
    const query = session.prepareQuery(
      { sql: built.queryString, params: built.params },
      built.fields,
      name,
      true,
    ) as unknown as BuiltQuery & { execute(values: Values): Promise<Result> };
    query.joinsNotNullableMap = built.joinsNotNullableMap;
    return query.execute(values);
  };
}

// --- authentication (src/db/sqlite/auth-lookups.ts)

/**
 * A coalesced statement's join: the first row of `table` where `where` holds, for each key row, looked
 * up by the key (an index probe per key) as a lateral subquery named as the table (or its alias), so
 * that the selected columns find it. PostgreSQL guesses that a json_to_recordset yields 100 rows, and
 * for a table of up to some 20,000 rows a plain join then scanned the whole table and hashed it: the
 * device-token lookup of a check-in batch cost 5-9 ms with 20,000 tokens, 0.5 ms as a lateral lookup
 * (scripts/bench.ts --store replicas, pg_stat_statements).
 */
function byKey(db: PgDb, table: PgTable, where: SQL, name: string, orderBy: SQL[] = []) {
  return db
    .select()
    .from(table)
    .where(where)
    .orderBy(...orderBy)
    .limit(1)
    .as(name);
}

/** The keys of a coalesced lookup, as the rows of its statement: `v`, each with its index `k`. */
function keyRows<Key extends object>(keys: readonly Key[]): string {
  return JSON.stringify(keys.map((key, k) => ({ k, ...key })));
}

const sessionsQuery = builtOnce("lookUpSessions", (db) =>
  db
    .select({
      k: sql<number>`v.k`,
      user: users,
      plan: organizations.plan,
      requireMfa: organizations.requireMfa,
      sessionRevokedAt: sessions.revokedAt,
      signInMethod: sessions.signInMethod,
      sessionUserId: sessions.userId,
    })
    .from(
      sql`json_to_recordset(${sql.placeholder("keys")}::text::json) AS v(k int, "sessionId" text, "userId" text)`,
    )
    .innerJoinLateral(byKey(db, users, eq(users.id, sql`v."userId"`), "users"), sql`true`)
    .innerJoinLateral(
      byKey(db, organizations, sql`${organizations.id} = "users"."organization_id"`, "organizations"),
      sql`true`,
    )
    .leftJoinLateral(byKey(db, sessions, eq(sessions.id, sql`v."sessionId"`), "sessions"), sql`true`),
);
const sessionLookup = coalesced((db, keys: readonly { sessionId: string; userId: string }[]) =>
  sessionsQuery(db, { keys: keyRows(keys) }),
);

/** Every request with an access token: coalesced with the others of its turn (coalesce.ts). */
export function lookUpSession(db: Db, sessionId: string, userId: string) {
  return sessionLookup(db, { sessionId, userId });
}

const apiKeyQuery = builtOnce("lookUpApiKey", (db) =>
  db
    .select()
    .from(apiKeys)
    .where(eq(apiKeys.keyHash, sql.placeholder("keyHash")))
    .limit(1),
);

export function lookUpApiKey(db: Db, keyHash: string) {
  return first(apiKeyQuery(db, { keyHash }));
}

const keyHolderQuery = builtOnce("lookUpKeyHolder", (db) =>
  db
    .select({ user: users, plan: organizations.plan })
    .from(users)
    .innerJoin(organizations, eq(organizations.id, users.organizationId))
    .where(eq(users.id, sql.placeholder("userId")))
    .limit(1),
);

export function lookUpKeyHolder(db: Db, userId: string) {
  return first(keyHolderQuery(db, { userId }));
}

const lockoutQuery = builtOnce("lookUpLockout", (db) =>
  db
    .select({ lockedUntil: loginFailures.lockedUntil })
    .from(loginFailures)
    .where(
      and(eq(loginFailures.email, sql.placeholder("email")), eq(loginFailures.ip, sql.placeholder("ip"))),
    )
    .limit(1),
);

export function lookUpLockout(db: DbOrTx, email: string, ip: string) {
  return first(lockoutQuery(db, { email, ip }));
}

// --- devices (src/db/sqlite/device-lookups.ts)

const deviceTokensQuery = builtOnce("lookUpDeviceTokens", (db) =>
  db
    .select({
      k: sql<number>`v.k`,
      token: deviceTokens,
      device: { id: devices.id, organizationId: devices.organizationId, status: devices.status },
    })
    .from(sql`json_to_recordset(${sql.placeholder("keys")}::text::json) AS v(k int, "tokenHash" text)`)
    .innerJoinLateral(
      byKey(db, deviceTokens, eq(deviceTokens.tokenHash, sql`v."tokenHash"`), "device_tokens"),
      sql`true`,
    )
    .innerJoinLateral(
      byKey(db, devices, sql`${devices.id} = "device_tokens"."device_id"`, "devices"),
      sql`true`,
    ),
);
const deviceTokenLookup = coalesced((db, keys: readonly { tokenHash: string }[]) =>
  deviceTokensQuery(db, { keys: keyRows(keys) }),
);

/** Every agent request with a token: coalesced with the others of its turn (coalesce.ts). */
export function lookUpDeviceToken(db: Db, tokenHash: string) {
  return deviceTokenLookup(db, { tokenHash });
}

export function selectPendingWipes(db: DbOrTx, deviceId: string) {
  return pg(db)
    .select()
    .from(wipes)
    .where(and(eq(wipes.deviceId, deviceId), eq(wipes.status, "pending")))
    .orderBy(asc(wipes.initiatedAt));
}

/**
 * Everything the device page shows, in one statement (a round trip each was most of a read's time):
 * the device, its newest wipe, its newest certificate and the id of the policy it follows (its own, or
 * the organization's default; null when that policy is gone).
 */
const devicePagesQuery = builtOnce("lookUpDevicePages", (db) => {
  const latestWipe = alias(wipes, "latest_wipe");
  const newestCertificate = alias(deviceCertificates, "newest_certificate");
  return db
    .select({
      k: sql<number>`v.k`,
      device: devices,
      latestWipe,
      certificate: newestCertificate,
      effectivePolicyId: sql<
        string | null
      >`(SELECT p.id FROM policies p WHERE p.organization_id = ${devices.organizationId}
        AND p.id = coalesce(lower(${devices.policyId}),
          (SELECT o.default_policy_id FROM organizations o WHERE o.id = ${devices.organizationId})))`,
    })
    .from(
      sql`json_to_recordset(${sql.placeholder("keys")}::text::json) AS v(k int, "organizationId" text, "deviceId" text)`,
    )
    .innerJoinLateral(
      byKey(
        db,
        devices,
        and(eq(devices.id, sql`v."deviceId"`), eq(devices.organizationId, sql`v."organizationId"`)) as SQL,
        "devices",
      ),
      sql`true`,
    )
    .leftJoinLateral(
      byKey(db, wipes, sql`${wipes.deviceId} = "devices"."id"`, "latest_wipe", [desc(wipes.initiatedAt)]),
      sql`true`,
    )
    .leftJoinLateral(
      byKey(
        db,
        deviceCertificates,
        sql`${deviceCertificates.deviceId} = "devices"."id"`,
        "newest_certificate",
        [desc(deviceCertificates.createdAt), desc(deviceCertificates.id)],
      ),
      sql`true`,
    );
});
const devicePageLookup = coalesced((db, keys: readonly { organizationId: string; deviceId: string }[]) =>
  devicePagesQuery(db, { keys: keyRows(keys) }),
);

/** Every device read: coalesced with the others of its turn (coalesce.ts). */
export async function lookUpDevicePage(db: Db, organizationId: string, deviceId: string) {
  const row = await devicePageLookup(db, { organizationId, deviceId });
  return (
    // A left join of no row leaves its columns null (Drizzle does not know the lateral join's name).
    row && {
      ...row,
      latestWipe: (row.latestWipe as { id: string | null } | null)?.id ? row.latestWipe : undefined,
      certificate: (row.certificate as { id: string | null } | null)?.id ? row.certificate : undefined,
    }
  );
}

// --- the check-in (src/db/sqlite/check-in-statements.ts)

/** The check-in rows of several devices (a check-in batch's), in one statement. */
const checkInDevicesQuery = builtOnce("lookUpCheckInDevices", (db) =>
  db
    .select({
      ...getTableColumns(devices),
      organizationSubnet: sql<
        string | null
      >`(SELECT organizations.vpn_subnet FROM organizations WHERE organizations.id = ${devices.organizationId})`,
      storedServerPublicKey: sql<
        string | null
      >`(SELECT server_keys.public_key FROM server_keys WHERE server_keys.name = ${sql.placeholder("serverKeyName")})`,
    })
    .from(devices)
    .where(sql`${devices.id} IN (SELECT json_array_elements_text(${sql.placeholder("ids")}::text::json))`)
    // Locked, in one order on every server: the batch runs READ COMMITTED (check-in-batcher.ts), and
    // what it writes is judged from the rows as they are once no one else is writing them.
    .orderBy(asc(devices.id))
    .for("update", { of: devices }),
);

export function lookUpCheckInDevices(db: Db, deviceIds: readonly string[], serverKeyName: string) {
  return checkInDevicesQuery(db, { ids: JSON.stringify(deviceIds), serverKeyName });
}

/** The pending wipes of several devices, by device and oldest first, in one statement. */
const pendingWipesOfQuery = builtOnce("lookUpPendingWipesOf", (db) =>
  db
    .select()
    .from(wipes)
    .where(
      and(
        sql`${wipes.deviceId} IN (SELECT json_array_elements_text(${sql.placeholder("ids")}::text::json))`,
        eq(wipes.status, "pending"),
      ),
    )
    .orderBy(asc(wipes.deviceId), asc(wipes.initiatedAt)),
);

export function lookUpPendingWipesOf(db: Db, deviceIds: readonly string[]) {
  return pendingWipesOfQuery(db, { ids: JSON.stringify(deviceIds) });
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

/**
 * The UPDATE of saveDevicesColumns for one set of columns: every device's values arrive as one JSON
 * array, read back as rows of the columns' own types (json_to_recordset), so a batch of check-ins is
 * one statement whatever its size. Built once per set of columns.
 */
const devicesUpdates = new Map<string, { head: SQL; tail: SQL }>();
function devicesUpdate(columns: readonly string[]): { head: SQL; tail: SQL } {
  const key = columns.join(",");
  let statement = devicesUpdates.get(key);
  if (!statement) {
    const byKey = getTableColumns(devices) as Record<string, { name: string; getSQLType(): string }>;
    const named = columns.map((column) => {
      const definition = byKey[column];
      if (!definition) throw new Error(`devices has no column ${column}`);
      // A collation belongs to the stored column; the values' row type takes the plain type.
      return {
        key: column,
        name: definition.name,
        type: definition.getSQLType().replace(/ COLLATE .*$/, ""),
      };
    });
    statement = {
      head: sql.raw(
        `UPDATE devices SET ${named.map((column) => `"${column.name}" = v."${column.key}"`).join(", ")} FROM json_to_recordset(`,
      ),
      tail: sql.raw(
        `::text::json) AS v("deviceId" text, ${named.map((column) => `"${column.key}" ${column.type}`).join(", ")}) WHERE devices.id = v."deviceId"`,
      ),
    };
    devicesUpdates.set(key, statement);
  }
  return statement;
}

/**
 * Writes the given columns of each device from its row (a check-in batch's devices): one statement per
 * set of columns (a steady heartbeat's, a full report's), however many devices.
 */
export async function saveDevicesColumns(
  db: DbOrTx,
  saves: readonly { deviceId: string; columns: readonly string[]; row: Record<string, unknown> }[],
): Promise<void> {
  const groups = new Map<string, { columns: readonly string[]; values: Record<string, unknown>[] }>();
  for (const save of saves) {
    const key = save.columns.join(",");
    let group = groups.get(key);
    if (!group) {
      group = { columns: save.columns, values: [] };
      groups.set(key, group);
    }
    const values: Record<string, unknown> = { deviceId: save.deviceId };
    for (const column of save.columns) values[column] = save.row[column];
    group.values.push(values);
  }
  for (const { columns, values } of groups.values()) {
    const { head, tail } = devicesUpdate(columns);
    await pg(db).execute(sql`${head}${JSON.stringify(values)}${tail}`);
  }
}

// --- certificates (src/db/sqlite/pki-lookups.ts)

const certificateHolderQuery = builtOnce("lookUpCertificateHolder", (db) =>
  db
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
    .where(eq(deviceCertificates.fingerprint, sql.placeholder("fingerprint")))
    .limit(1),
);

export function lookUpCertificateHolder(db: Db, fingerprint: string) {
  return first(certificateHolderQuery(db, { fingerprint }));
}

// --- policies (src/db/sqlite/policy-lookups.ts)

const currentPolicyVersionQuery = builtOnce("lookUpCurrentPolicyVersion", (db) => {
  const defaultPolicyId = sql<
    string | null
  >`(SELECT organizations.default_policy_id FROM organizations WHERE organizations.id = ${sql.placeholder("organizationId")})`;
  return db
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
        eq(policies.organizationId, sql.placeholder("organizationId")),
        eq(policies.id, sql`coalesce(${sql.placeholder("policyId")}::text, ${defaultPolicyId})`),
      ),
    )
    .limit(1);
});

export function lookUpCurrentPolicyVersion(db: Db, organizationId: string, policyId: string | null) {
  return first(currentPolicyVersionQuery(db, { organizationId, policyId }));
}

const policyDocumentQuery = builtOnce("lookUpPolicyDocument", (db) =>
  db
    .select({ policyData: policyVersions.policyData })
    .from(policyVersions)
    .where(
      and(
        eq(policyVersions.policyId, sql.placeholder("policyId")),
        eq(policyVersions.version, sql.placeholder("version")),
      ),
    )
    .limit(1),
);

export function lookUpPolicyDocument(db: Db, policyId: string, version: number) {
  return first(policyDocumentQuery(db, { policyId, version }));
}

// --- the outbox and the device log (src/db/sqlite/event-log.ts)

export async function insertEventRow(
  tx: DbOrTx,
  row: { id: string; organizationId: string; type: string; data: string; createdAt: string },
): Promise<number> {
  // The organization's event lock first, held to the end of the transaction, then the sequence number:
  // of two transactions recording events for one organization (two servers), the second takes its
  // number after the first has committed, so numbers follow commit order and the dispatcher, which
  // sends a subscription's deliveries in number order, never sends one whose predecessor is not yet
  // visible. SQLite's one writer gives this order by itself.
  const [inserted] = (await pg(tx).execute(sql`
    INSERT INTO events (id, organization_id, type, data, created_at)
    SELECT ${row.id}, ${row.organizationId}, ${row.type}, ${row.data}::text::json, ${row.createdAt}
    FROM (SELECT pg_advisory_xact_lock(hashtextextended('bulwark:events:' || ${row.organizationId}, 0))) AS ordered
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

/** Appends a device log entry; its details are dropped when the device's user objected or is restricted. */
export async function insertDeviceLogRow(
  tx: DbOrTx,
  row: { id: string; deviceId: string; event: string; details: string; createdAt: string },
): Promise<void> {
  await insertDeviceLogRows(tx, [row]);
}

/** insertDeviceLogRow for several entries (a check-in batch's), in one statement. */
export async function insertDeviceLogRows(
  tx: DbOrTx,
  rows: readonly { id: string; deviceId: string; event: string; details: string; createdAt: string }[],
): Promise<void> {
  if (rows.length === 0) return;
  await pg(tx).execute(sql`
    INSERT INTO device_logs (id, device_id, event, details, created_at)
    SELECT v.id, v."deviceId", v.event,
      CASE WHEN EXISTS (
        SELECT 1 FROM users u JOIN devices d ON d.user_id = u.id
        WHERE d.id = v."deviceId" AND (u.is_restricted OR u.device_activity_objected_at IS NOT NULL)
      ) THEN '{}'::json ELSE v.details::json END,
      v."createdAt"
    FROM json_to_recordset(${JSON.stringify(rows)}::text::json)
      AS v(id text, "deviceId" text, event text, details text, "createdAt" timestamptz)`);
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
