import type { MachineReader } from "../root-path";
import { type FactReading, known, unknown } from "./fact";

/** Where os-release(5) says to look, in order: /etc first, then the vendor's copy. */
const OS_RELEASE_FILES = ["/etc/os-release", "/usr/lib/os-release"];

/**
 * `os_version`: `ID VERSION_ID` of the machine's os-release (`ubuntu 24.04`). Left out when there is no
 * os-release or it has no VERSION_ID (rolling releases such as Arch have none).
 */
export async function readOsVersion(tree: MachineReader): Promise<FactReading<string>> {
  for (const file of OS_RELEASE_FILES) {
    const text = await tree.readText(file);
    if (text === null) continue;
    const fields = parseOsRelease(text);
    // os-release(5): "If not set, a default of ID=linux may be used."
    const id = fields.get("ID") || "linux";
    const version = fields.get("VERSION_ID");
    if (!version) return unknown(`${file} has no VERSION_ID (ID=${id})`);
    return known(`${id} ${version}`, `ID and VERSION_ID of ${file}`);
  }
  return unknown(`neither ${OS_RELEASE_FILES.join(" nor ")} exists`);
}

/**
 * The assignments of an os-release file as os-release(5) defines them: `KEY=value` lines in a subset of
 * shell syntax, the value unquoted or in single or double quotes, backslash escapes for `\`, `"`, `$` and
 * `` ` `` in double quotes and in unquoted values; lines starting with `#` and blank lines are ignored, and
 * so is a line that does not parse.
 */
export function parseOsRelease(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const rawLine of text.split("\n")) {
    const line = rawLine.trim();
    if (line === "" || line.startsWith("#")) continue;
    const match = /^([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (!match) continue;
    const value = shellWord(match[2] as string);
    if (value !== null) fields.set(match[1] as string, value);
  }
  return fields;
}

/** One shell word made of quoted and unquoted pieces (`"a"'b'c`), or null when a quote is not closed. */
function shellWord(source: string): string | null {
  let value = "";
  let index = 0;
  while (index < source.length) {
    const char = source[index] as string;
    if (char === "'") {
      const end = source.indexOf("'", index + 1);
      if (end < 0) return null;
      value += source.slice(index + 1, end);
      index = end + 1;
    } else if (char === '"') {
      index++;
      while (index < source.length && source[index] !== '"') {
        const next = source[index + 1];
        if (source[index] === "\\" && next !== undefined && '\\"$`'.includes(next)) {
          value += next;
          index += 2;
        } else value += source[index++];
      }
      if (index >= source.length) return null;
      index++;
    } else if (char === "\\" && index + 1 < source.length) {
      value += source[index + 1];
      index += 2;
    } else if (/\s/.test(char)) {
      // An unquoted space ends the word; what follows would be a second assignment or a command.
      break;
    } else {
      value += char;
      index++;
    }
  }
  return value;
}
