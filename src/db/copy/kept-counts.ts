import { CopyFailed } from "./copy-errors";
import type { CopyTable } from "./copy-plan";
import type { Row, StoreSession } from "./store";

/**
 * What the triggers on `devices` keep (migrations/0009_device_counts.sql and 0010_device_list_version.sql;
 * migrations/pg/0001_triggers.sql on PostgreSQL): `device_counts`, the devices of each organization by
 * status, platform and compliance, and `organizations.device_list_version`. The copy suspends the
 * target's triggers and brings these over as the rows they are; left on, they would count every copied
 * device a second time and bump the versions of the organizations copied with them. This checks them
 * once the devices are in: each `device_counts` row equals the copied devices' count (rows at 0, kept
 * once a combination empties, have none), and each organization's `device_list_version` and
 * `device_count` (the latter kept by the device domain) equal the source's.
 */
export async function checkKeptCounts(
  source: StoreSession,
  target: StoreSession,
  tables: readonly CopyTable[],
): Promise<void> {
  const organizations = tableNamed(tables, "organizations");
  const organizationDifference = firstDifference(
    await allRows(source, organizations),
    await allRows(target, organizations),
    (row) => String(row.id),
    (row) => `device_count ${row.deviceCount}, device_list_version ${row.deviceListVersion}`,
  );
  if (organizationDifference)
    throw new CopyFailed(`organizations differ after the copy: ${organizationDifference}`);

  const countKey = ["organizationId", "status", "platform", "complianceStatus"];
  const keyOf = (row: Row) => countKey.map((name) => String(row[name])).join("/");
  const counted = await target.countGroups(tableNamed(tables, "devices"), countKey);
  const countedKeys = new Set(counted.map(keyOf));
  const kept = (await allRows(target, tableNamed(tables, "device_counts"))).filter(
    (row) => row.count !== 0 || countedKeys.has(keyOf(row)),
  );
  const countDifference = firstDifference(counted, kept, keyOf, (row) => String(row.count), [
    "devices",
    "device_counts",
  ]);
  if (countDifference)
    throw new CopyFailed(`device_counts does not agree with the copied devices: ${countDifference}`);
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

/** The first row whose value differs between two lists, said as "KEY: source ..., target ...". */
function firstDifference(
  sourceRows: readonly Row[],
  targetRows: readonly Row[],
  keyOf: (row: Row) => string,
  describe: (row: Row) => string,
  [sourceName, targetName] = ["source", "target"],
): string | null {
  const targetValues = new Map(targetRows.map((row) => [keyOf(row), describe(row)]));
  const sourceKeys = new Set<string>();
  for (const row of sourceRows) {
    const key = keyOf(row);
    sourceKeys.add(key);
    const value = describe(row);
    const copied = targetValues.get(key);
    if (copied !== value) return `${key}: ${sourceName} ${value}, ${targetName} ${copied ?? "no row"}`;
  }
  const extra = targetRows.find((row) => !sourceKeys.has(keyOf(row)));
  return extra ? `${keyOf(extra)}: ${sourceName} no row, ${targetName} ${describe(extra)}` : null;
}
