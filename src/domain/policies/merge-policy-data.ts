import type { PolicyData } from "./policy-document";

/** Deep-merges partial customizations over a complete document into a fresh object; arrays are replaced. */
export function mergePolicyData(base: PolicyData, customizations: unknown): unknown {
  if (customizations === undefined) return cloneValue(base);
  if (!isPlainObject(customizations)) return customizations;
  return mergeObjects(base, customizations);
}

function mergeObjects(base: object, overrides: Record<string, unknown>): Record<string, unknown> {
  const merged = cloneValue(base) as Record<string, unknown>;
  for (const [key, override] of Object.entries(overrides)) {
    if (override === undefined) continue;
    const baseValue = Object.hasOwn(merged, key) ? merged[key] : undefined;
    const value =
      isPlainObject(baseValue) && isPlainObject(override)
        ? mergeObjects(baseValue, override)
        : cloneValue(override);
    setOwnProperty(merged, key, value);
  }
  return merged;
}

function cloneValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(cloneValue);
  if (!isPlainObject(value)) return value;
  const clone: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) setOwnProperty(clone, key, cloneValue(item));
  return clone;
}

// JSON.parse turns "__proto__" into an ordinary key; plain assignment would replace the prototype instead
// of keeping the key for the validator to reject.
function setOwnProperty(target: Record<string, unknown>, key: string, value: unknown): void {
  Object.defineProperty(target, key, { value, enumerable: true, writable: true, configurable: true });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== "object" || value === null || Array.isArray(value)) return false;
  const prototype = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}
