/**
 * Checks a configuration profile against Apple's published device-management schema (vendored in
 * test/fixtures/apple-device-management, Apple's MIT licence beside it), the way Apple's tools read it.
 * The profile is parsed by Python's plistlib, not by our code: every key must exist for its payload
 * type, with its type, its allowed values and ranges; required keys must be present; and nothing may
 * need what a profile installed by hand on an iPhone (iOS 15+) does not have: supervision, or a newer iOS.
 * Two keys are not in Apple's schema and are allowed by name, from the WireGuard app's own documentation
 * (wireguard-apple MOBILECONFIG.md): VendorConfig.WgQuickConfig (the vendor's dictionary) and
 * VPN.RemoteAddress (the server shown in Settings, which the app requires).
 */
import { join } from "node:path";

const SCHEMA_FOLDER = join(import.meta.dir, "../fixtures/apple-device-management");
/** The oldest iOS Bulwark supports (iOS 15): a key introduced later would be ignored there. */
const OLDEST_IOS = [15, 0];

interface SchemaKey {
  key: string;
  type: string;
  presence?: "required" | "optional";
  rangelist?: unknown[];
  range?: { min?: number; max?: number };
  subkeys?: SchemaKey[];
  supportedOS?: { iOS?: { introduced?: string; supervised?: boolean } };
}

interface SchemaFile {
  payload: {
    payloadtype: string;
    supportedOS: { iOS?: { introduced?: string; allowmanualinstall?: boolean; supervised?: boolean } };
  };
  payloadkeys: SchemaKey[];
}

/** A property-list value with its type, as plistlib read it. */
type Typed =
  | { t: "string"; v: string }
  | { t: "integer"; v: number }
  | { t: "real"; v: number }
  | { t: "boolean"; v: boolean }
  | { t: "data"; v: string }
  | { t: "date"; v: string }
  | { t: "array"; v: Typed[] }
  | { t: "dictionary"; v: Record<string, Typed> };

const PLISTLIB_TO_TYPED = `
import datetime, json, plistlib, sys
def typed(value):
    if isinstance(value, bool): return {"t": "boolean", "v": value}
    if isinstance(value, int): return {"t": "integer", "v": value}
    if isinstance(value, float): return {"t": "real", "v": value}
    if isinstance(value, str): return {"t": "string", "v": value}
    if isinstance(value, bytes): return {"t": "data", "v": value.hex()}
    if isinstance(value, datetime.datetime): return {"t": "date", "v": value.isoformat()}
    if isinstance(value, list): return {"t": "array", "v": [typed(item) for item in value]}
    if isinstance(value, dict): return {"t": "dictionary", "v": {key: typed(item) for key, item in value.items()}}
    raise TypeError(type(value))
print(json.dumps(typed(plistlib.loads(sys.stdin.buffer.read()))))
`;

/** `xml` parsed by Python's plistlib, each value tagged with its property-list type. */
export function parsePlistWithPython(xml: string | Uint8Array): Typed {
  const run = Bun.spawnSync(["python3", "-c", PLISTLIB_TO_TYPED], {
    stdin: typeof xml === "string" ? Buffer.from(xml) : xml,
    stdout: "pipe",
    stderr: "pipe",
  });
  if (run.exitCode !== 0) throw new Error(`plistlib refused the profile: ${run.stderr.toString()}`);
  return JSON.parse(run.stdout.toString()) as Typed;
}

/** The plain value of a tagged one (for assertions). */
export function plain(value: Typed): unknown {
  if (value.t === "array") return value.v.map(plain);
  if (value.t === "dictionary")
    return Object.fromEntries(Object.entries(value.v).map(([k, v]) => [k, plain(v)]));
  return value.v;
}

const schemas = new Map<string, SchemaFile>();
function schemaOf(name: string): SchemaFile {
  let schema = schemas.get(name);
  if (!schema) {
    const path = join(SCHEMA_FOLDER, `${name}.yaml`);
    schema = Bun.YAML.parse(require("node:fs").readFileSync(path, "utf8")) as SchemaFile;
    schemas.set(name, schema);
  }
  return schema;
}

/** Keys of a dictionary (named by its key) that the VPN app documents beyond Apple's schema. */
const VENDOR_DOCUMENTED: Record<string, { key: string; type: string }[]> = {
  VendorConfig: [{ key: "WgQuickConfig", type: "<string>" }],
  VPN: [{ key: "RemoteAddress", type: "<string>" }],
};

const TYPE_NAMES: Record<string, Typed["t"]> = {
  "<string>": "string",
  "<integer>": "integer",
  "<real>": "real",
  "<boolean>": "boolean",
  "<data>": "data",
  "<date>": "date",
  "<array>": "array",
  "<dictionary>": "dictionary",
};

function laterThanOldestIos(introduced: string | undefined): boolean {
  if (introduced === undefined) return false;
  if (introduced === "n/a") return true;
  const [major = 0, minor = 0] = introduced.split(".").map(Number);
  return major > (OLDEST_IOS[0] ?? 0) || (major === OLDEST_IOS[0] && minor > (OLDEST_IOS[1] ?? 0));
}

/** Every problem of `value` against `keys` (one dictionary level and below), with its path. */
function checkDictionary(value: Typed, keys: SchemaKey[], path: string, problems: string[]): void {
  if (value.t !== "dictionary") {
    problems.push(`${path}: a dictionary expected, got ${value.t}`);
    return;
  }
  const byName = new Map(keys.map((key) => [key.key, key]));
  for (const key of keys)
    if (key.presence === "required" && !(key.key in value.v))
      problems.push(`${path}.${key.key}: required, missing`);
  for (const [name, item] of Object.entries(value.v)) {
    const key = byName.get(name);
    if (!key) {
      problems.push(`${path}.${name}: not a key of Apple's schema here`);
      continue;
    }
    checkValue(item, key, `${path}.${name}`, problems);
  }
}

function checkValue(value: Typed, key: SchemaKey, path: string, problems: string[]): void {
  const expected = TYPE_NAMES[key.type];
  if (expected !== undefined && value.t !== expected)
    problems.push(`${path}: ${key.type} expected, got ${value.t}`);
  const ios = key.supportedOS?.iOS;
  if (ios?.supervised) problems.push(`${path}: needs a supervised iPhone`);
  if (laterThanOldestIos(ios?.introduced)) problems.push(`${path}: iOS ${ios?.introduced} (not on iOS 15)`);
  if (key.rangelist && !key.rangelist.includes((value as { v: unknown }).v))
    problems.push(
      `${path}: ${JSON.stringify((value as { v: unknown }).v)} is not one of ${JSON.stringify(key.rangelist)}`,
    );
  if (key.range && (value.t === "integer" || value.t === "real")) {
    if (key.range.min !== undefined && value.v < key.range.min)
      problems.push(`${path}: below ${key.range.min}`);
    if (key.range.max !== undefined && value.v > key.range.max)
      problems.push(`${path}: above ${key.range.max}`);
  }
  if (!key.subkeys || key.subkeys.length === 0) return;
  if (value.t === "dictionary") {
    const isAny = key.subkeys.length === 1 && key.subkeys[0]?.key === "ANY";
    if (!isAny)
      checkDictionary(value, [...key.subkeys, ...(VENDOR_DOCUMENTED[key.key] ?? [])], path, problems);
  } else if (value.t === "array") {
    const element = key.subkeys[0];
    if (element)
      for (const [index, item] of value.v.entries()) checkValue(item, element, `${path}[${index}]`, problems);
  }
}

/** Every problem of a whole profile (its top level and each payload); empty when it follows the schema. */
export function profileSchemaProblems(profile: Typed): string[] {
  const problems: string[] = [];
  const topLevel = schemaOf("TopLevel");
  checkDictionary(profile, topLevel.payloadkeys, "profile", problems);
  if (profile.t !== "dictionary") return problems;
  const content = profile.v.PayloadContent;
  if (content?.t !== "array") return problems;
  const common = schemaOf("CommonPayloadKeys").payloadkeys;
  content.v.forEach((payload, index) => {
    const path = `PayloadContent[${index}]`;
    const type = payload.t === "dictionary" ? payload.v.PayloadType : undefined;
    if (type?.t !== "string") {
      problems.push(`${path}: no PayloadType`);
      return;
    }
    let schema: SchemaFile;
    try {
      schema = schemaOf(type.v);
    } catch {
      problems.push(`${path}: ${type.v} is not a payload type vendored here`);
      return;
    }
    const ios = schema.payload.supportedOS.iOS;
    if (ios?.allowmanualinstall === false) problems.push(`${path}: ${type.v} cannot be installed by hand`);
    if (ios?.supervised) problems.push(`${path}: ${type.v} needs a supervised iPhone`);
    if (laterThanOldestIos(ios?.introduced)) problems.push(`${path}: ${type.v} is not on iOS 15`);
    const names = new Set(schema.payloadkeys.map((key) => key.key));
    checkDictionary(
      payload,
      [...common.filter((key) => !names.has(key.key)), ...schema.payloadkeys],
      path,
      problems,
    );
  });
  return problems;
}
