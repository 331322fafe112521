import { CopyFailed } from "./copy-errors";
import type { CopyTable } from "./copy-plan";
import type { Row, StoreSession } from "./store";

/**
 * What the triggers on `devices` keep (migrations/0009_device_counts.sql and 0010_device_list_version.sql;
 * migrations/pg/0001_triggers.sql on PostgreSQL), and how the copy brings it over:
 *
 * - `device_counts` is not copied row for row: inserting the devices makes the target's triggers count
 *   them. Its rows that reached 0 (kept, never deleted) have no device left to make them, and are copied
 *   afterwards. Then every row must equal the source's: a difference means a device did not come over as
 *   it was, or the source's counts had drifted from its devices.
 * - `organizations.device_list_version` is copied with the organizations, and then bumped by every device
 *   inserted behind a newer one of its organization: each organization's value is set back to the
 *   source's once the devices are in. (`organizations.device_count` is kept by the device domain, not a
 *   trigger: copied as it is.)
 */
export const TRIGGER_WRITTEN_TABLES: ReadonlySet<string> = new Set(["device_counts"]);

const COUNT_KEY = ["organizationId", "status", "platform", "complianceStatus"] as const;

/** After every table is copied: sets back and completes what the triggers changed, then compares it. */
export async function settleTriggerKeptValues(
  source: StoreSession,
  target: StoreSession,
  tables: readonly CopyTable[],
): Promise<void> {
  const organizations = tableNamed(tables, "organizations");
  const deviceCounts = tableNamed(tables, "device_counts");
  const sourceVersions = await allRows(source, organizations);
  const targetVersions = new Map((await allRows(target, organizations)).map((row) => [row.id, row]));
  for (const row of sourceVersions)
    if (targetVersions.get(row.id)?.deviceListVersion !== row.deviceListVersion)
      await target.update(organizations, { id: row.id }, { deviceListVersion: row.deviceListVersion });

  const sourceCounts = await allRows(source, deviceCounts);
  const counted = new Set((await allRows(target, deviceCounts)).map(countKey));
  await target.insert(
    deviceCounts,
    sourceCounts.filter((row) => !counted.has(countKey(row))),
  );

  const organizationDifference = firstDifference(
    sourceVersions,
    await allRows(target, organizations),
    (row) => String(row.id),
    (row) => `device_count ${row.deviceCount}, device_list_version ${row.deviceListVersion}`,
  );
  if (organizationDifference) throw new CopyFailed(`organizations: ${organizationDifference}`);
  const countDifference = firstDifference(
    sourceCounts,
    await allRows(target, deviceCounts),
    countKey,
    (row) => `count ${row.count}`,
  );
  if (countDifference)
    throw new CopyFailed(
      `device_counts, which the triggers made from the copied devices, differs from the source's: ${countDifference}`,
    );
}

function tableNamed(tables: readonly CopyTable[], name: string): CopyTable {
  const table = tables.find((candidate) => candidate.name === name);
  if (!table) throw new Error(`the schema has no table ${name}`);
  return table;
}

async function allRows(session: StoreSession, table: CopyTable): Promise<Row[]> {
  const rows: Row[] = [];
  for await (const batch of session.batches(table, 1000)) rows.push(...batch);
  return rows;
}

function countKey(row: Row): string {
  return COUNT_KEY.map((name) => String(row[name])).join("/");
}

/** The first row whose value differs between the two stores, said as "KEY: source ..., target ...". */
function firstDifference(
  sourceRows: readonly Row[],
  targetRows: readonly Row[],
  keyOf: (row: Row) => string,
  describe: (row: Row) => string,
): string | null {
  const targetValues = new Map(targetRows.map((row) => [keyOf(row), describe(row)]));
  const sourceKeys = new Set<string>();
  for (const row of sourceRows) {
    const key = keyOf(row);
    sourceKeys.add(key);
    const value = describe(row);
    const copied = targetValues.get(key);
    if (copied !== value) return `${key}: source ${value}, target ${copied ?? "no row"}`;
  }
  const extra = targetRows.find((row) => !sourceKeys.has(keyOf(row)));
  return extra ? `${keyOf(extra)}: source no row, target ${describe(extra)}` : null;
}
