import { KindGuard, type TArray, type TObject, type TSchema } from "@sinclair/typebox";
import { compileRe2Pattern } from "../../lib/re2-pattern";
import { workPathProblem } from "../../lib/work-path-rules";
import { type FieldError, ValidationError } from "../errors";
import { mergePolicyData } from "./merge-policy-data";
import { CLIPBOARD_DIRECTIONS, type PolicyData, PolicyDataSchema } from "./policy-document";
import { DEFAULT_POLICY_DATA } from "./policy-templates";

/** Options of validatePolicyData. */
export interface ValidatePolicyDataOptions {
  /** Complete document that omitted sections and settings are taken from; defaults to DEFAULT_POLICY_DATA. */
  base?: PolicyData;
  /** First segment of every error's field path; defaults to "policy_data". */
  fieldPrefix?: string;
}

/** The complete document, or every problem found. */
export type PolicyDataValidationResult =
  | { ok: true; value: PolicyData }
  | { ok: false; errors: FieldError[] };

type Path = readonly (string | number)[];

/** Merges a partial policy document over its base and checks the result, reporting every problem at once. */
export function validatePolicyData(
  input: unknown,
  options: ValidatePolicyDataOptions = {},
): PolicyDataValidationResult {
  const merged = mergePolicyData(options.base ?? DEFAULT_POLICY_DATA, input);
  const errors = new FieldErrorList(options.fieldPrefix ?? "policy_data");
  checkShape(PolicyDataSchema, merged, [], errors);
  if (isRecord(merged)) checkRules(merged, errors);
  if (errors.isEmpty()) return { ok: true, value: merged as PolicyData };
  return { ok: false, errors: errors.toArray() };
}

/** The complete document, or the 400 (reason policy_invalid) that lists every problem of it. */
export function requireValidPolicyData(result: PolicyDataValidationResult): PolicyData {
  if (!result.ok)
    throw new ValidationError("invalid request body", result.errors, undefined, "policy_invalid");
  return result.value;
}

/** Checks a document submitted on its own to be validated: it must be present, then as validatePolicyData. */
export function validateSubmittedPolicyData(input: unknown): PolicyDataValidationResult {
  if (input === undefined) return { ok: false, errors: [{ field: "policy_data", message: "is required" }] };
  return validatePolicyData(input);
}

class FieldErrorList {
  private readonly errors: FieldError[] = [];
  private readonly fields = new Set<string>();

  constructor(private readonly prefix: string) {}

  add(path: Path, message: string, received?: unknown): void {
    const field = this.fieldOf(path);
    this.fields.add(field);
    this.errors.push(received === undefined ? { field, message } : { field, message, received });
  }

  has(path: Path): boolean {
    return this.fields.has(this.fieldOf(path));
  }

  isEmpty(): boolean {
    return this.errors.length === 0;
  }

  toArray(): FieldError[] {
    return [...this.errors];
  }

  private fieldOf(path: Path): string {
    return [this.prefix, ...path].filter((segment) => segment !== "").join(".");
  }
}

// Walks the schema kinds PolicyDataSchema uses; `pattern` is left to the rules below for a clearer message.
function checkShape(schema: TSchema, value: unknown, path: Path, errors: FieldErrorList): void {
  if (KindGuard.IsObject(schema)) checkObject(schema, value, path, errors);
  else if (KindGuard.IsArray(schema)) checkArray(schema, value, path, errors);
  else {
    const problem = describeScalarProblem(schema, value, path);
    if (problem !== undefined) errors.add(path, problem, value);
  }
}

function checkObject(schema: TObject, value: unknown, path: Path, errors: FieldErrorList): void {
  if (!isRecord(value)) {
    errors.add(path, "must be an object", value);
    return;
  }
  const required = new Set(schema.required ?? []);
  for (const [key, propertySchema] of Object.entries(schema.properties)) {
    if (Object.hasOwn(value, key)) checkShape(propertySchema, value[key], [...path, key], errors);
    else if (required.has(key)) errors.add([...path, key], "is required");
  }
  for (const key of Object.keys(value)) {
    if (!Object.hasOwn(schema.properties, key)) errors.add([...path, key], "unknown field", value[key]);
  }
}

function checkArray(schema: TArray, value: unknown, path: Path, errors: FieldErrorList): void {
  if (!Array.isArray(value)) {
    errors.add(path, "must be an array", value);
  } else if (schema.maxItems !== undefined && value.length > schema.maxItems) {
    // An oversized list is one error, not one per item.
    errors.add(path, `must be at most ${schema.maxItems} items`, value);
  } else {
    value.forEach((item, index) => {
      checkShape(schema.items, item, [...path, index], errors);
    });
  }
}

function describeScalarProblem(schema: TSchema, value: unknown, path: Path): string | undefined {
  if (KindGuard.IsBoolean(schema)) return typeof value === "boolean" ? undefined : "must be a boolean";
  if (KindGuard.IsString(schema)) {
    if (typeof value !== "string") return "must be a string";
    const { minLength, maxLength } = schema;
    if (minLength !== undefined && value.length < minLength) {
      return minLength === 1 ? "must not be empty" : `must be at least ${minLength} characters`;
    }
    if (maxLength !== undefined && value.length > maxLength) return `must be at most ${maxLength} characters`;
    return undefined;
  }
  if (KindGuard.IsInteger(schema)) {
    if (typeof value !== "number" || !Number.isInteger(value)) return "must be an integer";
    if (schema.minimum !== undefined && value < schema.minimum) return `must be at least ${schema.minimum}`;
    if (schema.maximum !== undefined && value > schema.maximum) return `must be at most ${schema.maximum}`;
    return undefined;
  }
  if (KindGuard.IsUnion(schema) && schema.anyOf.every((member) => KindGuard.IsLiteral(member))) {
    const allowed: unknown[] = schema.anyOf.map((member) => member.const);
    return allowed.includes(value) ? undefined : `must be one of ${allowed.join(", ")}`;
  }
  throw new Error(`policy schema kind not supported by the validator at ${path.join(".")}`);
}

function checkRules(document: Record<string, unknown>, errors: FieldErrorList): void {
  const dlp = document.dlp;
  if (isRecord(dlp)) {
    checkSensitiveDataPatterns(dlp, errors);
    checkClipboardConsistency(dlp, errors);
  }
  const network = document.network;
  if (isRecord(network)) checkDomains(network, errors);
  const usb = document.usb;
  if (isRecord(usb)) {
    const whitelist = validStringItems(usb, ["usb", "whitelist"], errors);
    for (const item of whitelist) {
      if (!USB_DEVICE_ID.test(item.value)) {
        errors.add(item.path, "must be vendor:product with four hex digits each, e.g. 046d:c52b", item.value);
      }
    }
    reportDuplicates(whitelist, (value) => value.toLowerCase(), errors);
    reportDuplicates(validStringItems(usb, ["usb", "allowed_classes"], errors), (value) => value, errors);
  }
  const wipe = document.wipe;
  if (isRecord(wipe)) {
    const paths = validStringItems(wipe, ["wipe", "work_paths"], errors);
    for (const item of paths) {
      const problem = workPathProblem(item.value);
      if (problem !== undefined) errors.add(item.path, problem, item.value);
    }
    reportDuplicates(paths, (value) => value, errors);
  }
}

const USB_DEVICE_ID = /^[0-9a-f]{4}:[0-9a-f]{4}$/i;

function checkSensitiveDataPatterns(dlp: Record<string, unknown>, errors: FieldErrorList): void {
  const patterns = validStringItems(dlp, ["dlp", "sensitive_data_patterns"], errors);
  for (const item of patterns) {
    const compiled = compileRe2Pattern(item.value);
    if (!compiled.ok) errors.add(item.path, compiled.problem, item.value);
  }
  reportDuplicates(patterns, (value) => value, errors);
}

function checkClipboardConsistency(dlp: Record<string, unknown>, errors: FieldErrorList): void {
  const path = ["dlp", "clipboard_direction"];
  const { clipboard_sharing: isSharing, clipboard_direction: direction } = dlp;
  if (typeof isSharing !== "boolean" || errors.has(path)) return;
  if (!CLIPBOARD_DIRECTIONS.some((allowed) => allowed === direction)) return;
  if (!isSharing && direction !== "none") {
    errors.add(path, "must be none when clipboard_sharing is false", direction);
  } else if (isSharing && direction === "none") {
    errors.add(path, "must not be none when clipboard_sharing is true", direction);
  }
}

function checkDomains(network: Record<string, unknown>, errors: FieldErrorList): void {
  const allowed = validStringItems(network, ["network", "allowed_domains"], errors);
  const blocked = validStringItems(network, ["network", "blocked_domains"], errors);
  for (const item of [...allowed, ...blocked]) {
    const problem = describeDomainProblem(item.value);
    if (problem !== undefined) errors.add(item.path, problem, item.value);
  }
  reportDuplicates(allowed, (value) => value.toLowerCase(), errors);
  reportDuplicates(blocked, (value) => value.toLowerCase(), errors);
  const allowedDomains = new Set(allowed.map((item) => item.value.toLowerCase()));
  for (const item of blocked) {
    if (!errors.has(item.path) && allowedDomains.has(item.value.toLowerCase())) {
      errors.add(item.path, "must not also be in allowed_domains", item.value);
    }
  }
}

const HOSTNAME_LABEL = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/i;

function describeDomainProblem(domain: string): string | undefined {
  const hostname = domain.startsWith("*.") ? domain.slice(2) : domain;
  if (hostname.includes("*"))
    return "a wildcard is only allowed as the whole first label, as in *.example.com";
  const labels = hostname.split(".");
  const topLevelDomain = labels.at(-1) ?? "";
  const isHostname =
    hostname.length <= 253 &&
    labels.length >= 2 &&
    labels.every((label) => HOSTNAME_LABEL.test(label)) &&
    !/^\d+$/.test(topLevelDomain);
  return isHostname ? undefined : "must be a domain name such as example.com or *.example.com";
}

interface StringItem {
  value: string;
  path: Path;
}

/** The string items of a list that passed the shape check; none if the list itself is wrong. */
function validStringItems(
  section: Record<string, unknown>,
  listPath: readonly [string, string],
  errors: FieldErrorList,
): StringItem[] {
  const list = section[listPath[1]];
  if (!Array.isArray(list) || errors.has(listPath)) return [];
  const items: StringItem[] = [];
  list.forEach((value: unknown, index) => {
    const path = [...listPath, index];
    if (typeof value === "string" && !errors.has(path)) items.push({ value, path });
  });
  return items;
}

function reportDuplicates(
  items: StringItem[],
  normalize: (value: string) => string,
  errors: FieldErrorList,
): void {
  const seen = new Set<string>();
  for (const item of items) {
    if (errors.has(item.path)) continue;
    const key = normalize(item.value);
    if (seen.has(key)) errors.add(item.path, "duplicate value", item.value);
    seen.add(key);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
