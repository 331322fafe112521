/**
 * The Windows registry through `reg.exe`, which every Windows since XP has (and Wine too): `reg query`
 * to read a key's values, `reg add` and `reg delete` to change one. Its output format is Microsoft's
 * (learn.microsoft.com/windows-server/administration/windows-commands/reg-query): the key's full name on
 * a line of its own, then one line per value, `    NAME    REG_TYPE    DATA` (four spaces between the
 * fields), then the subkeys' names. Type names and key names are never translated; error messages are,
 * so only the exit code is trusted (0 found, 1 not found).
 */
import { existsSync, mkdtempSync, readFileSync, rmdirSync, unlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { firstLine, type ProgramRunner } from "../facts/fact";

/** The value types the agent reads and writes (REG_BINARY and others are read as text, written never). */
export type RegistryType = "REG_SZ" | "REG_EXPAND_SZ" | "REG_DWORD" | "REG_QWORD" | "REG_MULTI_SZ" | string;

/** A registry value as `reg query` prints it: its type and its data (a DWORD as `0x4`). */
export interface RegistryValue {
  type: RegistryType;
  data: string;
}

/** One key as `reg query KEY` prints it: its values by name (case as printed) and its subkeys' names. */
export interface RegistryKey {
  values: Map<string, RegistryValue>;
  subkeys: string[];
}

const VALUE_LINE = /^ {4}(.*?) {4}(REG_[A-Z_]+)(?: {4}(.*))?$/;

/**
 * The keys of a `reg query` output (one key, or a whole tree with `/s`), by their full names
 * (`HKEY_LOCAL_MACHINE\...`, as printed). A value's name is `(Default)` for the key's default value.
 */
export function parseRegQuery(output: string): Map<string, RegistryKey> {
  const keys = new Map<string, RegistryKey>();
  let first: RegistryKey | null = null;
  let firstName = "";
  let current: RegistryKey | null = null;
  for (const raw of output.replaceAll("\r\n", "\n").split("\n")) {
    if (raw.trim() === "") continue;
    const value = VALUE_LINE.exec(raw);
    if (value && current) {
      current.values.set(value[1] ?? "", { type: value[2] ?? "", data: value[3] ?? "" });
      continue;
    }
    if (!/^HKEY_[A-Z_]+/.test(raw)) continue;
    const name = raw.trim();
    const below = name.slice(firstName.length + 1);
    if (first && name.toLowerCase().startsWith(`${firstName.toLowerCase()}\\`) && !below.includes("\\"))
      first.subkeys.push(below);
    current = keys.get(name) ?? { values: new Map(), subkeys: [] };
    keys.set(name, current);
    if (first === null) {
      first = current;
      firstName = name;
    }
  }
  return keys;
}

/** `HKLM\...` in the long form `reg query` prints (`HKEY_LOCAL_MACHINE\...`). */
export function longKeyName(key: string): string {
  return key
    .replace(/^HKLM(?=\\|$)/i, "HKEY_LOCAL_MACHINE")
    .replace(/^HKCU(?=\\|$)/i, "HKEY_CURRENT_USER")
    .replace(/^HKU(?=\\|$)/i, "HKEY_USERS")
    .replace(/^HKCR(?=\\|$)/i, "HKEY_CLASSES_ROOT");
}

/** Finds a value by name, as Windows does: without regard to case. */
export function registryValue(key: RegistryKey | null, name: string): RegistryValue | null {
  if (key === null) return null;
  for (const [found, value] of key.values) if (found.toLowerCase() === name.toLowerCase()) return value;
  return null;
}

/** A REG_DWORD's number (`0x4` -> 4), or null for another type or unreadable data. */
export function dwordOf(value: RegistryValue | null): number | null {
  if (value === null || value.type !== "REG_DWORD") return null;
  const number = Number.parseInt(value.data, 16);
  return Number.isNaN(number) ? null : number;
}

/**
 * Reads one key's values (not its subkeys' values): null when the key does not exist. Any other failure
 * of `reg` (not installed, killed) throws with what it said.
 */
export async function readRegistryKey(run: ProgramRunner, key: string): Promise<RegistryKey | null> {
  const result = await run(["reg", "query", key]);
  if (result.code === 1) return null;
  if (result.code !== 0)
    throw new Error(
      `reg query ${key} failed (exit ${result.code}): ${result.stderr.trim() || result.stdout.trim()}`,
    );
  const keys = parseRegQuery(result.stdout);
  const wanted = longKeyName(key).toLowerCase();
  for (const [name, found] of keys) if (name.toLowerCase() === wanted) return found;
  return { values: new Map(), subkeys: [] };
}

/** The data as `reg add /d` takes it back: a DWORD in decimal, a multi-string with `\0` between items. */
function dataArgument(value: RegistryValue): string {
  if (value.type === "REG_DWORD" || value.type === "REG_QWORD") return String(BigInt(value.data));
  return value.data;
}

/** Writes a value (creating its key when needed); throws with reg's complaint when it cannot. */
export async function writeRegistryValue(
  run: ProgramRunner,
  key: string,
  name: string,
  value: RegistryValue,
): Promise<void> {
  const argv = ["reg", "add", key, "/v", name, "/t", value.type, "/d", dataArgument(value), "/f"];
  const result = await run(argv);
  if (result.code !== 0)
    throw new Error(
      `reg add ${key} /v ${name} failed (exit ${result.code}): ${result.stderr.trim() || result.stdout.trim()}`,
    );
}

/** Deletes a value; one that is not there is no error. */
export async function deleteRegistryValue(run: ProgramRunner, key: string, name: string): Promise<void> {
  const found = registryValue(await readRegistryKey(run, key), name);
  if (found === null) return;
  const result = await run(["reg", "delete", key, "/v", name, "/f"]);
  if (result.code !== 0)
    throw new Error(
      `reg delete ${key} /v ${name} failed (exit ${result.code}): ${result.stderr.trim() || result.stdout.trim()}`,
    );
}

/** Deletes a key the agent created, only when it holds no value and no subkey; returns whether it went. */
export async function deleteEmptyKey(run: ProgramRunner, key: string): Promise<boolean> {
  const found = await readRegistryKey(run, key);
  if (found === null) return true;
  if (found.values.size > 0 || found.subkeys.length > 0) return false;
  const result = await run(["reg", "delete", key, "/f"]);
  return result.code === 0;
}

/** A `.reg` value's data in `reg export`'s form (`"text"`, `dword:0000000a`, `hex(2):43,00,...`) as `reg query` gives it. */
function exportedValue(data: string): RegistryValue | null {
  if (data.startsWith('"') && data.endsWith('"'))
    return { type: "REG_SZ", data: data.slice(1, -1).replace(/\\(["\\])/g, "$1") };
  const dword = /^dword:([0-9a-fA-F]{8})$/.exec(data);
  if (dword) return { type: "REG_DWORD", data: `0x${Number.parseInt(dword[1] ?? "0", 16).toString(16)}` };
  const hex = /^hex(?:\(([0-9a-fA-F]+)\))?:(.*)$/.exec(data);
  if (!hex) return null;
  const bytes = Buffer.from(
    (hex[2] ?? "")
      .split(",")
      .filter((part) => part.trim() !== "")
      .map((part) => Number.parseInt(part.trim(), 16)),
  );
  // UTF-16LE strings end with a NUL; a multi-string's items are separated by one (shown as \0 by reg query).
  const text = () => bytes.toString("utf16le").replace(/\0+$/, "");
  switch ((hex[1] ?? "").toLowerCase()) {
    case "2":
      return { type: "REG_EXPAND_SZ", data: text() };
    case "7":
      return { type: "REG_MULTI_SZ", data: text().replaceAll("\0", "\\0") };
    case "1":
      return { type: "REG_SZ", data: text() };
    case "b":
      return { type: "REG_QWORD", data: `0x${bytes.readBigUInt64LE(0).toString(16)}` };
    default:
      return { type: "REG_BINARY", data: bytes.toString("hex").toUpperCase() };
  }
}

/**
 * The keys of a `reg export` file (the `.reg` format: UTF-16LE text, `[KEY]` then `"NAME"=DATA` lines, a
 * line ending in `\` going on in the next), in the form parseRegQuery gives. Unlike `reg query`, whose
 * output to a pipe is in the console's code page, the file keeps every character of a name or a path.
 */
export function parseRegExport(text: string): Map<string, RegistryKey> {
  const keys = new Map<string, RegistryKey>();
  let current: RegistryKey | null = null;
  const lines = text
    .replace(/^\uFEFF/, "")
    .replaceAll("\r\n", "\n")
    .split("\n");
  for (let index = 0; index < lines.length; index++) {
    let line = lines[index] ?? "";
    while (line.endsWith("\\") && index + 1 < lines.length)
      line = line.slice(0, -1) + (lines[++index] ?? "").trim();
    const header = /^\[(HKEY_[^\]]+)\]$/.exec(line.trim());
    if (header) {
      const name = header[1] ?? "";
      current = { values: new Map(), subkeys: [] };
      keys.set(name, current);
      const parent = name.slice(0, name.lastIndexOf("\\"));
      keys.get(parent)?.subkeys.push(name.slice(parent.length + 1));
      continue;
    }
    const entry = /^(?:"((?:[^"\\]|\\.)*)"|@)=(.*)$/.exec(line);
    if (!entry || current === null) continue;
    const value = exportedValue(entry[2] ?? "");
    if (value !== null)
      current.values.set(entry[1] === undefined ? "(Default)" : entry[1].replace(/\\(["\\])/g, "$1"), value);
  }
  return keys;
}

/**
 * A key and everything below it, through `reg export` into a temporary file read as UTF-16; a failure
 * (no such key, access denied: both exit 1) throws with what reg said.
 */
export async function readRegistryTree(run: ProgramRunner, key: string): Promise<Map<string, RegistryKey>> {
  const folder = mkdtempSync(join(tmpdir(), "bulwark-reg-"));
  const file = join(folder, "export.reg");
  try {
    const result = await run(["reg", "export", key, file, "/y"]);
    if (result.code !== 0 || !existsSync(file))
      throw new Error(
        `reg export ${key} failed (exit ${result.code}): ${firstLine(result.stderr || result.stdout)}`,
      );
    return parseRegExport(readFileSync(file).toString("utf16le"));
  } finally {
    // File by file: Bun's recursive rm fails under Wine (EFAULT).
    if (existsSync(file)) unlinkSync(file);
    rmdirSync(folder);
  }
}
