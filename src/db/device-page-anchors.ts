import { eq } from "drizzle-orm";
import { toIso } from "../lib/clock";
import { type Db, withTransaction } from "./client";
import type { devices } from "./schema";
import { deviceListAnchors } from "./tables";

/**
 * Unfiltered device-list pages that cost the same on page 20,000 as on page 2.
 *
 * SQLite serves OFFSET n by walking n index entries: at 1M devices a page near the end took ~100 ms,
 * ~850 ms at p99 with the table rows read too. Instead the list keeps, per organization, an anchor every
 * ANCHOR_SPACING rows: the sort key (enrolled_at, id) of the row at that position. A deep page seeks to
 * the anchor before it in the (organization_id, enrolled_at, id) index and skips fewer than
 * ANCHOR_SPACING entries. Anchors are found when a page first needs them (one seek and a skip of
 * ANCHOR_SPACING entries each, ~140 µs), or by warmUpAnchors after a start for the largest
 * organizations, and kept in device_list_anchors: walking a million devices' index takes ~140 ms, which
 * the first deep pages after every restart paid (p99 239 ms at 1M against 34 ms at 100k), where reading
 * the kept anchors back takes one row.
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
/** Changing it makes the kept anchors wrong: a migration that changes it must empty device_list_anchors. */
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
  /** The next key being found: pages and the warm-up walking at once share each statement. */
  next?: Promise<SortKey | undefined>;
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
  const key = await anchorAt(db, statements, organizationId, anchors, index);
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
  if (!anchors) {
    const stored = await storedAnchors(db, organizationId, version);
    // Another page may have found or read them while this one read: walk with it, not beside it.
    anchors = cache.get(organizationId) ?? stored;
    cache.delete(organizationId);
  }
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

/**
 * keys[index], found from the last known anchor when not yet known (and then kept in the database soon
 * after); undefined past the end. `pause`, when given, is awaited between anchors.
 */
async function anchorAt(
  db: Db,
  statements: DevicePageStatements,
  organizationId: string,
  anchors: Anchors,
  index: number,
  pause?: () => Promise<void>,
): Promise<SortKey | undefined> {
  const before = anchors.keys.length;
  try {
    while (anchors.keys.length <= index) {
      if (!anchors.next) {
        const next = findNextAnchor(statements, organizationId, anchors);
        anchors.next = next;
        // Cleared once settled, failed or not (a statement may throw before this line runs).
        next.then(
          () => {
            if (anchors.next === next) anchors.next = undefined;
          },
          () => {
            if (anchors.next === next) anchors.next = undefined;
          },
        );
      }
      if (!(await anchors.next)) return undefined;
      await pause?.();
    }
    return anchors.keys[index];
  } finally {
    if (anchors.keys.length > before) keepSoon(db, organizationId, anchors);
  }
}

/** The anchor after the last known one, added to `anchors.keys`; undefined past the end of the list. */
async function findNextAnchor(
  statements: DevicePageStatements,
  organizationId: string,
  anchors: Anchors,
): Promise<SortKey | undefined> {
  const known = anchors.keys.length;
  const key = await statements.nextAnchor(organizationId, anchors.keys[known - 1] as SortKey);
  if (key && anchors.keys.length === known) anchors.keys.push({ ...key });
  return key;
}

/** The anchors kept in the database for the organization's list at `version`; undefined when none are. */
async function storedAnchors(db: Db, organizationId: string, version: number): Promise<Anchors | undefined> {
  const [row] = await db
    .select({ version: deviceListAnchors.listVersion, keys: deviceListAnchors.keys })
    .from(deviceListAnchors)
    .where(eq(deviceListAnchors.organizationId, organizationId));
  if (!row || row.version !== version || row.keys.length === 0) return undefined;
  return { version, shift: 0, keys: row.keys.map((key) => ({ enrolledAt: key.enrolledAt, id: key.id })) };
}

/** How long newly found anchors wait before they are written: a deep walk writes them once. */
const KEEP_DELAY_MS = 1000;
const keeping = new WeakMap<Db, Set<string>>();

/**
 * Writes the organization's anchors to device_list_anchors a moment from now (once for all found in
 * the meantime), in a transaction of their own: best effort, since pages stay right without them.
 */
function keepSoon(db: Db, organizationId: string, anchors: Anchors): void {
  let pending = keeping.get(db);
  if (!pending) {
    pending = new Set();
    keeping.set(db, pending);
  }
  if (pending.has(organizationId)) return;
  pending.add(organizationId);
  const timer = setTimeout(() => {
    pending.delete(organizationId);
    const row = {
      organizationId,
      listVersion: anchors.version,
      keys: anchors.keys.map((key) => ({ enrolledAt: key.enrolledAt, id: key.id })),
      updatedAt: toIso(new Date()),
    };
    withTransaction(db, async (tx) => {
      await tx
        .insert(deviceListAnchors)
        .values(row)
        .onConflictDoUpdate({
          target: deviceListAnchors.organizationId,
          set: { listVersion: row.listVersion, keys: row.keys, updatedAt: row.updatedAt },
        });
    }).catch(() => {
      // A closed or busy database: the anchors are found again when needed.
    });
  }, KEEP_DELAY_MS);
  timer.unref?.();
}

/** Anchors found in one go by warmUpAnchors before it lets other work run. */
const WARM_UP_SLICE = 16;

/**
 * Finds and keeps the anchors of every organization given (the largest first, as many as are kept),
 * down to the end of each list, a few at a time with other work in between: run after a start, so
 * that a restarted server has them before anyone pages deep, and a new one finds them once.
 */
export async function warmUpAnchors(
  db: Db,
  statements: DevicePageStatements,
  organizationIds: readonly string[],
): Promise<void> {
  let found = 0;
  const pause = async () => {
    if (++found % WARM_UP_SLICE === 0) await new Promise((resolve) => setImmediate(resolve));
  };
  for (const organizationId of organizationIds.slice(0, MAX_ORGANIZATIONS)) {
    const state = await statements.state(organizationId);
    if (!state || state.count <= ANCHOR_SPACING) continue;
    const anchors = await currentAnchors(db, statements, organizationId, state.version);
    if (anchors) await anchorAt(db, statements, organizationId, anchors, Number.MAX_SAFE_INTEGER, pause);
  }
}
