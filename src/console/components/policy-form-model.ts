import type { Schemas } from "../api/client";
import { POLICY_SECTIONS, type PolicyData, readSetting, SETTINGS_BY_PATH } from "./policy-settings";

/** What the editor's controls hold, by setting path ("dlp.print_allowed"): booleans, else text as typed. */
export type PolicyFormValues = Record<string, boolean | string>;

/** One problem as the server reports it (400 of /policies/validate, POST and PUT /policies). */
export interface FieldProblem {
  field: string;
  message: string;
  received?: unknown;
}

/** A problem placed on the control it belongs to, in words that say which line of a list is wrong. */
export interface PlacedProblem {
  /** "name", "description", a setting path, or null when no control matches (shown in the summary only). */
  target: string | null;
  /** For an item of a list: its line in the textarea (1-based). */
  line?: number;
  message: string;
}

/** A policy's settings as the editor's controls show them. */
export function toFormValues(data: PolicyData): PolicyFormValues {
  const values: PolicyFormValues = {};
  for (const setting of SETTINGS_BY_PATH.values()) {
    const value = readSetting(data, setting);
    if (setting.kind === "boolean") values[setting.path] = value === true;
    else if (setting.kind === "list") values[setting.path] = Array.isArray(value) ? value.join("\n") : "";
    else values[setting.path] = value === undefined || value === null ? "" : String(value);
  }
  return values;
}

export interface PolicyDocumentDraft {
  /** The document as typed: the server checks every value, so nothing is corrected or dropped here but blank lines. */
  policyData: Schemas["PolicyDataInput"];
  /** For each list, the textarea line (1-based) of each item: the server names items by their index. */
  lines: Record<string, number[]>;
}

/** The controls' values as a complete policy_data, and where each list item came from. */
export function toPolicyDocument(values: PolicyFormValues): PolicyDocumentDraft {
  const document: Record<string, Record<string, unknown>> = {};
  const lines: Record<string, number[]> = {};
  for (const part of POLICY_SECTIONS) {
    const settings: Record<string, unknown> = {};
    for (const setting of part.settings) {
      const value = values[setting.path];
      if (setting.kind === "list") {
        const items: string[] = [];
        const itemLines: number[] = [];
        String(value ?? "")
          .split(/\r?\n/)
          .forEach((line, index) => {
            const item = line.trim();
            if (item === "") return;
            items.push(item);
            itemLines.push(index + 1);
          });
        settings[setting.key] = items;
        lines[setting.path] = itemLines;
      } else if (setting.kind === "number") {
        // A blank box is sent as null and "2.5" as 2.5, so that the server says what is wrong with them.
        const text = String(value ?? "").trim();
        settings[setting.key] = text === "" ? null : Number(text);
      } else {
        settings[setting.key] = value;
      }
    }
    document[part.key] = settings;
  }
  return { policyData: document as Schemas["PolicyDataInput"], lines };
}

// Where the settings sit in a request body: POST/PUT /policies and /validate use policy_data,
// POST /policies/from-template uses customizations.
const DOCUMENT_PREFIXES = ["policy_data.", "customizations."];

/** Puts a server-reported problem on its control: `policy_data.network.allowed_domains.2` is line 3 of that box. */
export function placeProblem(problem: FieldProblem, lines: Record<string, number[]>): PlacedProblem {
  if (problem.field === "name" || problem.field === "description") {
    return { target: problem.field, message: problem.message };
  }
  const prefix = DOCUMENT_PREFIXES.find((candidate) => problem.field.startsWith(candidate));
  const path = prefix ? problem.field.slice(prefix.length) : problem.field;
  const [sectionKey, settingKey, index] = path.split(".");
  const setting = SETTINGS_BY_PATH.get(`${sectionKey}.${settingKey}`);
  if (!prefix || !setting) return { target: null, message: `${path}: ${problem.message}` };
  if (index !== undefined && setting.kind === "list") {
    const line = lines[setting.path]?.[Number(index)] ?? Number(index) + 1;
    const item = typeof problem.received === "string" ? ` (“${problem.received}”)` : "";
    return { target: setting.path, line, message: `Line ${line}${item}: ${problem.message}` };
  }
  return { target: setting.path, message: problem.message };
}

/** The problems of one control, as the single message its Field shows. */
export function messageFor(problems: PlacedProblem[], target: string): string | undefined {
  const messages = problems.filter((problem) => problem.target === target).map((problem) => problem.message);
  return messages.length > 0 ? [...new Set(messages)].join("; ") : undefined;
}
