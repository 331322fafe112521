import { connectionOf, type Db } from "../client";
import type { devices } from "../schema";
import { oncePerDatabase } from "./prepared";

/**
 * Unfiltered device-list pages that cost the same on page 20,000 as on page 2.
 *
 * SQLite serves OFFSET n by walking n index entries: at 1M devices a page near the end took ~100 ms,
 * ~850 ms at p99 with the table rows read too. Instead the list keeps, per organization, an anchor every
 * ANCHOR_SPACING rows: the sort key (enrolled_at, id) of the row at that position. A deep page seeks to
 * the anchor before it in the (organization_id, enrolled_at, id) index and skips fewer than
 * ANCHOR_SPACING entries. Anchors are found when a page first needs them (one seek and a skip of
 * ANCHOR_SPACING entries each, ~140 µs), so nothing is done at start or for organizations nobody pages
 * through.
 *
 * They stay exact while organizations.device_list_version is unchanged: triggers (migration 0010) bump it
 * when a device is deleted, its enrolled_at or organization changes, or one is inserted anywhere but at
 * the head of the list. Devices enrolled at the head (what an enrollment does: enrolled_at is now) move
 * every position down by their number, counted above the first anchor on each use. A deletion drops the
 * organization's anchors; the next deep pages find them again.
 */
export const ANCHOR_SPACING = 1000;
/** Past this many devices enrolled since the anchors were found, they are found again. */
const MAX_SHIFT = 10 * ANCHOR_SPACING;
/** Organizations whose anchors are kept (the least recently paged are dropped first). */
const MAX_ORGANIZATIONS = 64;

interface SortKey {
  enrolledAt: string;
  id: string;
}

interface Anchors {
  /** organizations.device_list_version when they were found. */
  version: number;
  /** Devices enrolled above keys[0] since they were found: every position moved down by this many. */
  shift: number;
  /** keys[i] is the row that was at position i * ANCHOR_SPACING. */
  keys: SortKey[];
}

type DeviceRow = typeof devices.$inferSelect;
/** What a device-list item shows. */
export type ListRow = Pick<
  DeviceRow,
  "id" | "deviceName" | "platform" | "status" | "lastSeen" | "enrolledAt" | "complianceStatus"
>;

const anchorsByOrganization = oncePerDatabase(() => new Map<string, Anchors>());

/** One page of the organization's devices, newest enrolled first, and how many there are. */
export function selectUnfilteredDevicePage(
  db: Db,
  organizationId: string,
  page: { page: number; pageSize: number },
): { rows: ListRow[]; total: number } {
  const connection = connectionOf(db);
  const state = connection
    .prepare<{ count: number; version: number }, [{ organizationId: string }]>(ORGANIZATION_STATE)
    .get({ organizationId });
  if (!state) return { rows: [], total: 0 };
  const offset = (page.page - 1) * page.pageSize;
  const rows =
    anchoredRows(db, organizationId, state.version, offset, page.pageSize) ??
    connection
      .prepare<ListRow, [{ organizationId: string; limit: number; offset: number }]>(PAGE)
      .all({ organizationId, limit: page.pageSize, offset });
  return { rows, total: state.count };
}

/**
 * The page read from the anchor before it, or undefined when a plain OFFSET is as cheap or the anchors
 * cannot be trusted: inside a transaction, whose changes (and list version) a rollback may take back.
 */
function anchoredRows(
  db: Db,
  organizationId: string,
  version: number,
  offset: number,
  limit: number,
): ListRow[] | undefined {
  if (offset < ANCHOR_SPACING || connectionOf(db).inTransaction) return undefined;
  const anchors = currentAnchors(db, organizationId, version);
  if (!anchors) return undefined;
  const position = offset - anchors.shift;
  if (position < ANCHOR_SPACING) return undefined;
  const index = Math.floor(position / ANCHOR_SPACING);
  const key = anchorAt(db, organizationId, anchors, index);
  if (!key) return undefined; // past the end: OFFSET finds nothing as cheaply
  return connectionOf(db)
    .prepare<ListRow, [Record<string, string | number>]>(PAGE_FROM_KEY)
    .all({ organizationId, ...key, limit, offset: position - index * ANCHOR_SPACING });
}

/** The organization's anchors, checked against its list version, with the devices enrolled above them. */
function currentAnchors(db: Db, organizationId: string, version: number): Anchors | undefined {
  const cache = anchorsByOrganization(db);
  let anchors = cache.get(organizationId);
  cache.delete(organizationId); // re-inserted below: the Map's order is the least recently used first
  if (anchors && anchors.version !== version) anchors = undefined;
  if (anchors) {
    const above =
      connectionOf(db)
        .prepare<{ count: number }, [Record<string, string>]>(COUNT_ABOVE)
        .get({ organizationId, ...(anchors.keys[0] as SortKey) })?.count ?? 0;
    if (above > MAX_SHIFT) anchors = undefined;
    else anchors.shift = above;
  }
  if (!anchors) {
    const top = connectionOf(db)
      .prepare<SortKey, [{ organizationId: string }]>(FIRST_KEY)
      .get({ organizationId });
    if (!top) return undefined;
    anchors = { version, shift: 0, keys: [{ ...top }] };
  }
  cache.set(organizationId, anchors);
  if (cache.size > MAX_ORGANIZATIONS) cache.delete(cache.keys().next().value as string);
  return anchors;
}

/** keys[index], found from the last known anchor when not yet known; undefined past the end. */
function anchorAt(db: Db, organizationId: string, anchors: Anchors, index: number): SortKey | undefined {
  const next = connectionOf(db).prepare<SortKey, [Record<string, string>]>(NEXT_ANCHOR);
  while (anchors.keys.length <= index) {
    const last = anchors.keys[anchors.keys.length - 1] as SortKey;
    const key = next.get({ organizationId, ...last });
    if (!key) return undefined;
    anchors.keys.push({ ...key });
  }
  return anchors.keys[index];
}

// Constant texts, prepared once through the connection's statement cache. (enrolled_at, id) row values
// are compared as one range on the (organization_id, enrolled_at, id) index.
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

// Counted no further than MAX_SHIFT + 1: past that the anchors are found again anyway.
const COUNT_ABOVE = `
  SELECT count(*) AS count FROM (
    SELECT 1 FROM devices
    WHERE organization_id = $organizationId AND (enrolled_at, id) > ($enrolledAt, $id)
    LIMIT ${MAX_SHIFT + 1})`;

/** The statements, for the query-plan tests. */
export const UNFILTERED_PAGE_STATEMENTS = { PAGE, PAGE_FROM_KEY, FIRST_KEY, NEXT_ANCHOR, COUNT_ABOVE };
