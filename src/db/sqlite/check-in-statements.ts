/**
 * A check-in's reads and its one write, on SQLite: prepared once per connection (the hot path of a
 * fleet) and run on the transaction's handle. The domain calls these functions and never the statements.
 */
import { eq, getTableColumns, sql } from "drizzle-orm";
import type { Db } from "../client";
import { devices } from "../schema";
import { selectPendingWipes } from "./device-lookups";
import { oncePerDatabase, preparedRead } from "./prepared";

/** The name of the WireGuard server's key pair in server_keys. */
export const SERVER_KEY_NAME = "wireguard";

// The device row, with what its peer settings need from its organization and the server key: scalar
// subqueries, one statement, always current (the key is replaced when the installation gets its second
// organization, possibly by `bulwark admin create` in another process).
const deviceById = preparedRead((db: Db) =>
  db
    .select({
      ...getTableColumns(devices),
      organizationSubnet: sql<
        string | null
      >`(SELECT organizations.vpn_subnet FROM organizations WHERE organizations.id = devices.organization_id)`,
      storedServerPublicKey: sql<
        string | null
      >`(SELECT server_keys.public_key FROM server_keys WHERE server_keys.name = ${sql.raw(`'${SERVER_KEY_NAME}'`)})`,
    })
    .from(devices)
    .where(eq(devices.id, sql.placeholder("id"))),
);
const pendingWipes = preparedRead((db: Db) => selectPendingWipes(db, sql.placeholder("deviceId")));

/** The device row a check-in reads, with its organization's subnet and the server's stored public key. */
export function lookUpCheckInDevice(db: Db, deviceId: string) {
  return deviceById(db).get({ id: deviceId });
}

/** The device's pending wipes, oldest first. */
export function lookUpPendingWipes(db: Db, deviceId: string) {
  return pendingWipes(db).all({ deviceId });
}

type DeviceRow = typeof devices.$inferSelect;
type DeviceColumn = keyof DeviceRow;
/** JSON columns go in as written (JSON text or NULL): the column's encoder would store null as 'null'. */
const JSON_COLUMNS = new Set<DeviceColumn>(["facts", "ignoredFacts", "enforcement"]);
const updates = oncePerDatabase(
  () => new Map<readonly DeviceColumn[], { run(values: Record<string, unknown>): unknown }>(),
);

/**
 * Writes `columns` of the device from `row`, one statement prepared per connection and column list (the
 * check-in has two: a steady heartbeat's five columns and a full report's).
 */
export function saveDeviceColumns(
  db: Db,
  deviceId: string,
  columns: readonly DeviceColumn[],
  row: Pick<DeviceRow, DeviceColumn>,
): void {
  const statements = updates(db);
  let statement = statements.get(columns);
  if (!statement) {
    statement = db
      .update(devices)
      .set(
        Object.fromEntries(
          columns.map((column) => [
            column,
            JSON_COLUMNS.has(column) ? sql`${sql.placeholder(column)}` : sql.placeholder(column),
          ]),
        ),
      )
      .where(eq(devices.id, sql.placeholder("id")))
      .prepare();
    statements.set(columns, statement);
  }
  const values: Record<string, unknown> = { id: deviceId };
  for (const column of columns) {
    const value = row[column];
    values[column] = JSON_COLUMNS.has(column) && value !== null ? JSON.stringify(value) : value;
  }
  statement.run(values);
}
