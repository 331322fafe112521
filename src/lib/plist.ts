/**
 * Apple's XML property list (plist(5)): the format of a configuration profile (.mobileconfig), of a
 * launchd job and of macOS's SystemVersion.plist. Written: strings, numbers, booleans, dates, data,
 * arrays and dictionaries, a dictionary's keys in the order given and an undefined value leaving its key out.
 * Read: the same. No dependency: the files are short and their grammar is plain XML.
 */
import { escapeXml } from "./escape-xml";

export type PlistValue =
  | string
  | number
  | boolean
  | Date
  | Uint8Array
  | readonly PlistValue[]
  | { readonly [key: string]: PlistValue | undefined };

const XML_HEADER =
  '<?xml version="1.0" encoding="UTF-8"?>\n' +
  '<!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">\n';

/** `value` as a complete XML property list document. */
export function formatPlist(value: PlistValue): string {
  return `${XML_HEADER}<plist version="1.0">\n${element(value, 0)}\n</plist>\n`;
}

function element(value: PlistValue, depth: number): string {
  const indent = "\t".repeat(depth);
  if (typeof value === "string") return `${indent}<string>${escapeXml(value)}</string>`;
  if (typeof value === "boolean") return `${indent}<${value}/>`;
  if (typeof value === "number")
    return Number.isInteger(value)
      ? `${indent}<integer>${value}</integer>`
      : `${indent}<real>${value}</real>`;
  if (value instanceof Date) return `${indent}<date>${value.toISOString().replace(/\.\d{3}Z$/, "Z")}</date>`;
  if (value instanceof Uint8Array) return `${indent}<data>${Buffer.from(value).toString("base64")}</data>`;
  if (Array.isArray(value)) {
    if (value.length === 0) return `${indent}<array/>`;
    return `${indent}<array>\n${value.map((item) => element(item, depth + 1)).join("\n")}\n${indent}</array>`;
  }
  const entries = Object.entries(value as Record<string, PlistValue | undefined>).filter(
    (entry): entry is [string, PlistValue] => entry[1] !== undefined,
  );
  if (entries.length === 0) return `${indent}<dict/>`;
  const inner = entries
    .map(([key, item]) => `${indent}\t<key>${escapeXml(key)}</key>\n${element(item, depth + 1)}`)
    .join("\n");
  return `${indent}<dict>\n${inner}\n${indent}</dict>`;
}

/** A value read from a property list. */
export type ParsedPlist =
  | string
  | number
  | boolean
  | Date
  | Uint8Array
  | ParsedPlist[]
  | ParsedPlistDictionary;
export interface ParsedPlistDictionary {
  [key: string]: ParsedPlist;
}

/** A plist that is not one (a parse error), with what was wrong. */
export class PlistError extends Error {}

const ENTITIES: Record<string, string> = { lt: "<", gt: ">", amp: "&", quot: '"', apos: "'" };

function decodeText(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]+|#\d+|lt|gt|amp|quot|apos);/g, (_, name: string) => {
    if (name.startsWith("#x")) return String.fromCodePoint(Number.parseInt(name.slice(2), 16));
    if (name.startsWith("#")) return String.fromCodePoint(Number.parseInt(name.slice(1), 10));
    return ENTITIES[name] ?? "";
  });
}

interface Token {
  kind: "open" | "close" | "empty" | "text";
  name: string;
  text: string;
}

/** The tags and texts of the document, without its prolog, doctype and comments. */
function tokensOf(xml: string): Token[] {
  const body = xml
    .replace(/<\?[\s\S]*?\?>/g, "")
    .replace(/<!--[\s\S]*?-->/g, "")
    .replace(/<!DOCTYPE[^>]*>/i, "");
  const tokens: Token[] = [];
  const pattern = /<(\/?)([A-Za-z]+)(?:\s[^>]*?)?(\/?)>|([^<]+)/g;
  for (let match = pattern.exec(body); match !== null; match = pattern.exec(body)) {
    if (match[4] !== undefined) {
      tokens.push({ kind: "text", name: "", text: match[4] });
      continue;
    }
    const kind = match[1] === "/" ? "close" : match[3] === "/" ? "empty" : "open";
    tokens.push({ kind, name: match[2] ?? "", text: "" });
  }
  return tokens;
}

/** Parses an XML property list; throws PlistError when it is not one. */
export function parsePlist(xml: string): ParsedPlist {
  const tokens = tokensOf(xml).filter((token) => token.kind !== "text" || token.text.trim() !== "");
  let at = 0;
  const next = (): Token => {
    const token = tokens[at++];
    if (token === undefined) throw new PlistError("the plist ends early");
    return token;
  };
  const textUntil = (name: string): string => {
    let text = "";
    for (let token = next(); !(token.kind === "close" && token.name === name); token = next()) {
      if (token.kind !== "text") throw new PlistError(`<${token.name}> inside <${name}>`);
      text += token.text;
    }
    return decodeText(text);
  };
  const value = (token: Token): ParsedPlist => {
    if (token.kind === "empty") {
      const empty: Record<string, ParsedPlist> = {
        true: true,
        false: false,
        string: "",
        array: [],
        dict: {},
      };
      const found = empty[token.name];
      if (found === undefined) throw new PlistError(`<${token.name}/> is not a plist value`);
      return Array.isArray(found) ? [] : typeof found === "object" ? {} : found;
    }
    if (token.kind !== "open") throw new PlistError(`unexpected ${token.kind} ${token.name || token.text}`);
    switch (token.name) {
      case "string":
        return textUntil("string");
      case "integer": {
        const text = textUntil("integer").trim();
        if (!/^[+-]?\d+$/.test(text)) throw new PlistError(`<integer>${text}</integer> is not an integer`);
        return Number.parseInt(text, 10);
      }
      case "real": {
        const number = Number(textUntil("real").trim());
        if (Number.isNaN(number)) throw new PlistError("a <real> that is no number");
        return number;
      }
      case "date":
        return new Date(textUntil("date").trim());
      case "data":
        return Buffer.from(textUntil("data").replace(/\s+/g, ""), "base64");
      case "array": {
        const items: ParsedPlist[] = [];
        for (let item = next(); !(item.kind === "close" && item.name === "array"); item = next())
          items.push(value(item));
        return items;
      }
      case "dict": {
        const dictionary: ParsedPlistDictionary = {};
        for (let item = next(); !(item.kind === "close" && item.name === "dict"); item = next()) {
          if (item.kind !== "open" || item.name !== "key")
            throw new PlistError("a <dict> entry without its <key>");
          const key = textUntil("key");
          dictionary[key] = value(next());
        }
        return dictionary;
      }
      default:
        throw new PlistError(`<${token.name}> is not a plist value`);
    }
  };
  const root = next();
  if (root.kind !== "open" || root.name !== "plist") throw new PlistError("no <plist> element");
  const result = value(next());
  const end = next();
  if (end.kind !== "close" || end.name !== "plist") throw new PlistError("more than one value in <plist>");
  return result;
}
