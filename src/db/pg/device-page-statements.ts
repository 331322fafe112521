/**
 * The device list's statements on PostgreSQL (src/db/device-page-anchors.ts pages with them): the same
 * SQL as SQLite's, row values compared as one range on the (organization_id, enrolled_at, id) index.
 */
import { sql } from "drizzle-orm";
import type { Db } from "../client";
import {
  ANCHOR_SPACING,
  type DevicePageStatements,
  type ListRow,
  MAX_SHIFT,
  type SortKey,
} from "../device-page-anchors";
import { selectRows } from "../dialect";
import { isPgTransaction } from "./client";

const COLUMNS = sql.raw(`id, device_name AS "deviceName", platform, status, last_seen AS "lastSeen",
  enrolled_at AS "enrolledAt", compliance_status AS "complianceStatus"`);
const KEY = sql.raw(`enrolled_at AS "enrolledAt", id`);

/** PostgreSQL hands timestamps back as dates; the list holds ISO text, as the domain does everywhere. */
function withIsoTimes<T extends { enrolledAt: unknown; lastSeen?: unknown }>(row: T): T {
  const iso = (value: unknown) => (value instanceof Date ? value.toISOString() : value);
  return {
    ...row,
    enrolledAt: iso(row.enrolledAt),
    ...("lastSeen" in row ? { lastSeen: iso(row.lastSeen) } : {}),
  };
}

/** The list's statements on this PostgreSQL handle. */
export function pgDevicePageStatements(db: Db): DevicePageStatements {
  const rows = async <T extends { enrolledAt: unknown }>(query: ReturnType<typeof sql>) =>
    (await selectRows<T>(db, query)).map(withIsoTimes);
  return {
    state: async (organizationId) => {
      const [state] = await selectRows<{ count: number | string; version: number | string }>(
        db,
        sql`SELECT device_count AS count, device_list_version AS version FROM organizations WHERE id = ${organizationId}`,
      );
      return state && { count: Number(state.count), version: Number(state.version) };
    },
    page: (organizationId, limit, offset) =>
      rows<ListRow>(sql`SELECT ${COLUMNS} FROM devices WHERE organization_id = ${organizationId}
        ORDER BY enrolled_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`),
    pageFromKey: (organizationId, key, limit, offset) =>
      rows<ListRow>(sql`SELECT ${COLUMNS} FROM devices
        WHERE organization_id = ${organizationId} AND (enrolled_at, id) <= (${key.enrolledAt}::timestamptz, ${key.id})
        ORDER BY enrolled_at DESC, id DESC LIMIT ${limit} OFFSET ${offset}`),
    firstKey: async (organizationId) =>
      (
        await rows<SortKey>(sql`SELECT ${KEY} FROM devices WHERE organization_id = ${organizationId}
          ORDER BY enrolled_at DESC, id DESC LIMIT 1`)
      )[0],
    nextAnchor: async (organizationId, key) =>
      (
        await rows<SortKey>(sql`SELECT ${KEY} FROM devices
          WHERE organization_id = ${organizationId} AND (enrolled_at, id) < (${key.enrolledAt}::timestamptz, ${key.id})
          ORDER BY enrolled_at DESC, id DESC LIMIT 1 OFFSET ${sql.raw(String(ANCHOR_SPACING - 1))}`)
      )[0],
    countAbove: async (organizationId, key) => {
      const [counted] = await selectRows<{ count: number | string }>(
        db,
        sql`SELECT count(*) AS count FROM (
          SELECT 1 FROM devices
          WHERE organization_id = ${organizationId} AND (enrolled_at, id) > (${key.enrolledAt}::timestamptz, ${key.id})
          LIMIT ${sql.raw(String(MAX_SHIFT + 1))}) AS above`,
      );
      return Number(counted?.count ?? 0);
    },
    inTransaction: () => isPgTransaction(db),
  };
}
