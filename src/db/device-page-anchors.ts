import type { Db } from "./client";
import type { devices } from "./schema";

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
 *
 * PostgreSQL's OFFSET walks index entries too (and its triggers keep the same list version), so both stores
 * page this way; each gives the few statements (src/db/sqlite/device-page-statements.ts,
 * src/db/pg/device-page-statements.ts).
 */
export const ANCHOR_SPACING = 1000;
/** Past this many devices enrolled since the anchors were found, they are found again. */
export const MAX_SHIFT = 10 * ANCHOR_SPACING;
/** Organizations whose anchors are kept (the least recently paged are dropped first). */
const MAX_ORGANIZATIONS = 64;

export interface SortKey {
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

/** What a value or a promise of it: SQLite's statements answer at once, PostgreSQL's later. */
type Maybe<T> = T | Promise<T>;

/** A store's statements for the list, each over the (organization_id, enrolled_at, id) index. */
export interface DevicePageStatements {
  /** The organization's device count and list version; undefined for no such organization. */
  state(organizationId: string): Maybe<{ count: number; version: number } | undefined>;
  /** A page by OFFSET from the head of the list. */
  page(organizationId: string, limit: number, offset: number): Maybe<ListRow[]>;
  /** A page by OFFSET from the row `key` (included), down the list. */
  pageFromKey(organizationId: string, key: SortKey, limit: number, offset: number): Maybe<ListRow[]>;
  /** The key of the head of the list. */
  firstKey(organizationId: string): Maybe<SortKey | undefined>;
  /** The key ANCHOR_SPACING rows below `key`. */
  nextAnchor(organizationId: string, key: SortKey): Maybe<SortKey | undefined>;
  /** How many rows are above `key`, counted no further than MAX_SHIFT + 1. */
  countAbove(organizationId: string, key: SortKey): Maybe<number>;
  /** Whether the handle is inside a transaction, whose changes (and list version) a rollback may take back. */
  inTransaction(): boolean;
}

const anchorsByDatabase = new WeakMap<Db, Map<string, Anchors>>();

/** One page of the organization's devices, newest enrolled first, and how many there are. */
export async function selectDevicePageWithAnchors(
  db: Db,
  statements: DevicePageStatements,
  organizationId: string,
  page: { page: number; pageSize: number },
): Promise<{ rows: ListRow[]; total: number }> {
  const state = await statements.state(organizationId);
  if (!state) return { rows: [], total: 0 };
  const offset = (page.page - 1) * page.pageSize;
  const rows =
    (await anchoredRows(db, statements, organizationId, state.version, offset, page.pageSize)) ??
    (await statements.page(organizationId, page.pageSize, offset));
  return { rows, total: state.count };
}

/** The page read from the anchor before it, or undefined when a plain OFFSET is as cheap or the anchors cannot be trusted. */
async function anchoredRows(
  db: Db,
  statements: DevicePageStatements,
  organizationId: string,
  version: number,
  offset: number,
  limit: number,
): Promise<ListRow[] | undefined> {
  if (offset < ANCHOR_SPACING || statements.inTransaction()) return undefined;
  const anchors = await currentAnchors(db, statements, organizationId, version);
  if (!anchors) return undefined;
  const position = offset - anchors.shift;
  if (position < ANCHOR_SPACING) return undefined;
  const index = Math.floor(position / ANCHOR_SPACING);
  const key = await anchorAt(statements, organizationId, anchors, index);
  if (!key) return undefined; // past the end: OFFSET finds nothing as cheaply
  return await statements.pageFromKey(organizationId, key, limit, position - index * ANCHOR_SPACING);
}

/** The organization's anchors, checked against its list version, with the devices enrolled above them. */
async function currentAnchors(
  db: Db,
  statements: DevicePageStatements,
  organizationId: string,
  version: number,
): Promise<Anchors | undefined> {
  let cache = anchorsByDatabase.get(db);
  if (!cache) {
    cache = new Map();
    anchorsByDatabase.set(db, cache);
  }
  let anchors = cache.get(organizationId);
  cache.delete(organizationId); // re-inserted below: the Map's order is the least recently used first
  if (anchors && anchors.version !== version) anchors = undefined;
  if (anchors) {
    const above = await statements.countAbove(organizationId, anchors.keys[0] as SortKey);
    if (above > MAX_SHIFT) anchors = undefined;
    else anchors.shift = above;
  }
  if (!anchors) {
    const top = await statements.firstKey(organizationId);
    if (!top) return undefined;
    anchors = { version, shift: 0, keys: [{ ...top }] };
  }
  cache.set(organizationId, anchors);
  if (cache.size > MAX_ORGANIZATIONS) cache.delete(cache.keys().next().value as string);
  return anchors;
}

/** keys[index], found from the last known anchor when not yet known; undefined past the end. */
async function anchorAt(
  statements: DevicePageStatements,
  organizationId: string,
  anchors: Anchors,
  index: number,
): Promise<SortKey | undefined> {
  while (anchors.keys.length <= index) {
    const known = anchors.keys.length;
    const key = await statements.nextAnchor(organizationId, anchors.keys[known - 1] as SortKey);
    if (!key) return undefined;
    // Another request paging deep at the same time may have found it meanwhile.
    if (anchors.keys.length === known) anchors.keys.push({ ...key });
  }
  return anchors.keys[index];
}
