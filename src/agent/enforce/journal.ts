/**
 * The undo journal: for every file the agent changed under ROOT, what was there before it first touched
 * it (the bytes and mode, or that there was no file) and the directories it created for it. It is
 * written before the change it records, so that a crash at any point can still be undone.
 */
import { join } from "node:path";
import { type FileState, readFileState, removeFileDurably, writeFileAtomically } from "./safe-files";

/** The journal's file in the state folder. */
export const JOURNAL_FILE = "enforcement-journal.json";

/** One file the agent changed. */
export interface JournalEntry {
  /** The path under ROOT, e.g. /etc/hosts. */
  path: string;
  /** whole: the agent wrote the whole file; section: only its `# BEGIN bulwark` section (/etc/hosts). */
  kind: "whole" | "section";
  /** The file before the agent first changed it; null when there was none. */
  original: { content_base64: string; mode: number } | null;
  /** Directories the agent created for the file (outermost first), removed again when empty. */
  created_dirs: string[];
}

/** One registry value the agent changed (Windows): the value before it first changed it, or none. */
export interface RegistryJournalEntry {
  /** The key, as `reg` names it (`HKLM\\SYSTEM\\...`). */
  key: string;
  name: string;
  /** The value's type and data before the agent first changed it; null when there was none. */
  original: { type: string; data: string } | null;
  /** Keys the agent created for the value (outermost first), deleted again when empty. */
  created_keys: string[];
}

export interface Journal {
  format: 1;
  files: JournalEntry[];
  /** Windows: the registry values changed; absent in a journal written before there were any. */
  registry?: RegistryJournalEntry[];
}

export function emptyJournal(): Journal {
  return { format: 1, files: [] };
}

/** Whether the journal records nothing to undo. */
export function isJournalEmpty(journal: Journal): boolean {
  return journal.files.length === 0 && (journal.registry ?? []).length === 0;
}

/** The journal of `stateDir`, empty when there is none. */
export function readJournal(stateDir: string): Journal {
  const found = readFileState(join(stateDir, JOURNAL_FILE));
  if (found === null) return emptyJournal();
  const journal = JSON.parse(found.bytes.toString("utf8")) as Journal;
  if (
    journal.format !== 1 ||
    !Array.isArray(journal.files) ||
    (journal.registry !== undefined && !Array.isArray(journal.registry))
  )
    throw new Error(`${join(stateDir, JOURNAL_FILE)}: not an enforcement journal this agent can read`);
  return journal;
}

/** Writes the journal (0600, atomically); an empty journal removes the file. */
export function writeJournal(stateDir: string, journal: Journal): void {
  const path = join(stateDir, JOURNAL_FILE);
  if (isJournalEmpty(journal)) removeFileDurably(path);
  else writeFileAtomically(path, Buffer.from(`${JSON.stringify(journal, null, 2)}\n`), 0o600);
}

/** The journal's record of a registry value, found as Windows finds names: without regard to case. */
export function registryJournalEntry(
  journal: Journal,
  key: string,
  name: string,
): RegistryJournalEntry | undefined {
  return (journal.registry ?? []).find(
    (entry) =>
      entry.key.toLowerCase() === key.toLowerCase() && entry.name.toLowerCase() === name.toLowerCase(),
  );
}

export function journalEntry(journal: Journal, path: string): JournalEntry | undefined {
  return journal.files.find((entry) => entry.path === path);
}

/** The recorded earlier file of an entry, as bytes and mode (null: there was none). */
export function originalOf(entry: JournalEntry): FileState {
  return entry.original === null
    ? null
    : { bytes: Buffer.from(entry.original.content_base64, "base64"), mode: entry.original.mode };
}

/** The journal's record of a file found as `state`. */
export function originalFrom(state: FileState): JournalEntry["original"] {
  return state === null ? null : { content_base64: state.bytes.toString("base64"), mode: state.mode };
}
