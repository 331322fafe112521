import { type PolicyData, PolicyDataSchema } from "./policy-document";

/** The parts of a policy version that history lines describe. */
export interface DescribablePolicy {
  name: string;
  description: string | null;
  policy_data: PolicyData;
}

/** Human-readable change lines for policy history, in schema order; empty when nothing changed. */
export function describePolicyChanges(before: DescribablePolicy, after: DescribablePolicy): string[] {
  const lines = [
    ...describeValueChange("name", before.name, after.name),
    ...describeValueChange("description", before.description, after.description),
  ];
  for (const [section, sectionSchema] of Object.entries(PolicyDataSchema.properties)) {
    const beforeSection = readSettings(before.policy_data, section);
    const afterSection = readSettings(after.policy_data, section);
    for (const setting of Object.keys(sectionSchema.properties)) {
      lines.push(
        ...describeValueChange(`${section}.${setting}`, beforeSection[setting], afterSection[setting]),
      );
    }
  }
  return lines;
}

/** Whether two policy documents have the same settings. */
export function isSamePolicyDocument(first: PolicyData, second: PolicyData): boolean {
  return isDeepEqual(first, second);
}

function readSettings(document: PolicyData, section: string): Record<string, unknown> {
  return (document as Record<string, Record<string, unknown> | undefined>)[section] ?? {};
}

function describeValueChange(path: string, before: unknown, after: unknown): string[] {
  if (isDeepEqual(before, after)) return [];
  if (Array.isArray(before) && Array.isArray(after)) return describeListChange(path, before, after);
  return [`${path}: ${formatValue(before)} -> ${formatValue(after)}`];
}

function describeListChange(path: string, before: unknown[], after: unknown[]): string[] {
  const added = subtractItems(after, before);
  const removed = subtractItems(before, after);
  if (added.length === 0 && removed.length === 0) return [`${path}: reordered`];
  return [
    ...added.map((item) => `${path}: added ${formatValue(item)}`),
    ...removed.map((item) => `${path}: removed ${formatValue(item)}`),
  ];
}

/** Items of `from` left after taking out one match for each item of `other`, in `from`'s order. */
function subtractItems(from: unknown[], other: unknown[]): unknown[] {
  const remaining = [...other];
  return from.filter((item) => {
    const index = remaining.findIndex((candidate) => isDeepEqual(candidate, item));
    if (index === -1) return true;
    remaining.splice(index, 1);
    return false;
  });
}

function formatValue(value: unknown): string {
  return value === undefined ? "(unset)" : JSON.stringify(value);
}

function isDeepEqual(first: unknown, second: unknown): boolean {
  if (Object.is(first, second)) return true;
  if (Array.isArray(first) || Array.isArray(second)) {
    return (
      Array.isArray(first) &&
      Array.isArray(second) &&
      first.length === second.length &&
      first.every((item, index) => isDeepEqual(item, second[index]))
    );
  }
  if (!isRecord(first) || !isRecord(second)) return false;
  const keys = Object.keys(first);
  return (
    keys.length === Object.keys(second).length &&
    keys.every((key) => Object.hasOwn(second, key) && isDeepEqual(first[key], second[key]))
  );
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null;
}
