/**
 * The device list's statements on SQLite (src/db/device-page-anchors.ts pages with them): constant texts,
 * prepared once through the connection's statement cache. (enrolled_at, id) row values are compared as
 * one range on the (organization_id, enrolled_at, id) index.
 */
import { connectionOf, type Db } from "../client";
import {
  ANCHOR_SPACING,
  type DevicePageStatements,
  type ListRow,
  MAX_SHIFT,
  type SortKey,
} from "../device-page-anchors";

const ORGANIZATION_STATE = `
  SELECT device_count AS count, device_list_version AS version FROM organizations WHERE id = $organizationId`;

const COLUMNS = `id, device_name AS deviceName, platform, status, last_seen AS lastSeen,
  enrolled_at AS enrolledAt, compliance_status AS complianceStatus`;

const PAGE = `
  SELECT ${COLUMNS} FROM devices WHERE organization_id = $organizationId
  ORDER BY enrolled_at DESC, id DESC LIMIT $limit OFFSET $offset`;

const PAGE_FROM_KEY = `
  SELECT ${COLUMNS} FROM devices
  WHERE organization_id = $organizationId AND (enrolled_at, id) <= ($enrolledAt, $id)
  ORDER BY enrolled_at DESC, id DESC LIMIT $limit OFFSET $offset`;

const FIRST_KEY = `
  SELECT enrolled_at AS enrolledAt, id FROM devices WHERE organization_id = $organizationId
  ORDER BY enrolled_at DESC, id DESC LIMIT 1`;

const NEXT_ANCHOR = `
  SELECT enrolled_at AS enrolledAt, id FROM devices
  WHERE organization_id = $organizationId AND (enrolled_at, id) < ($enrolledAt, $id)
  ORDER BY enrolled_at DESC, id DESC LIMIT 1 OFFSET ${ANCHOR_SPACING - 1}`;

const COUNT_ABOVE = `
  SELECT count(*) AS count FROM (
    SELECT 1 FROM devices
    WHERE organization_id = $organizationId AND (enrolled_at, id) > ($enrolledAt, $id)
    LIMIT ${MAX_SHIFT + 1})`;

/** The statements, for the query-plan tests. */
export const UNFILTERED_PAGE_STATEMENTS = { PAGE, PAGE_FROM_KEY, FIRST_KEY, NEXT_ANCHOR, COUNT_ABOVE };

const built = new WeakMap<Db, DevicePageStatements>();

/** The list's statements on this SQLite handle's connection. */
export function sqliteDevicePageStatements(db: Db): DevicePageStatements {
  let statements = built.get(db);
  if (!statements) {
    statements = buildStatements(db);
    built.set(db, statements);
  }
  return statements;
}

function buildStatements(db: Db): DevicePageStatements {
  const connection = connectionOf(db);
  return {
    state: (organizationId) =>
      connection
        .prepare<{ count: number; version: number }, [{ organizationId: string }]>(ORGANIZATION_STATE)
        .get({ organizationId }) ?? undefined,
    page: (organizationId, limit, offset) =>
      connection
        .prepare<ListRow, [{ organizationId: string; limit: number; offset: number }]>(PAGE)
        .all({ organizationId, limit, offset }),
    pageFromKey: (organizationId, key, limit, offset) =>
      connection
        .prepare<ListRow, [Record<string, string | number>]>(PAGE_FROM_KEY)
        .all({ organizationId, ...key, limit, offset }),
    firstKey: (organizationId) =>
      connection.prepare<SortKey, [{ organizationId: string }]>(FIRST_KEY).get({ organizationId }) ??
      undefined,
    nextAnchor: (organizationId, key) =>
      connection.prepare<SortKey, [Record<string, string>]>(NEXT_ANCHOR).get({ organizationId, ...key }) ??
      undefined,
    countAbove: (organizationId, key) =>
      connection
        .prepare<{ count: number }, [Record<string, string>]>(COUNT_ABOVE)
        .get({ organizationId, ...key })?.count ?? 0,
    inTransaction: () => connection.inTransaction,
  };
}
