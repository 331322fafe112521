/**
 * `bulwark agent capture DIR` and `bulwark agent facts --from-capture DIR`: every file, folder listing
 * and program output the fact readers read on this machine, recorded into a folder as they are read, and
 * read back from it so that a capture gives exactly the facts the machine gave. A support case, or a new
 * test fixture, then comes from a real machine rather than from what someone thinks it prints.
 *
 * The folder: `capture.json` (what replay reads: each reading in the order made), `README.txt` (what it
 * is, and for a fixture where its formats are documented), and, for people, each program's output in
 * `programs/` and each file read in `files/`. The agent's state folder (its keys and token) is never
 * read by the fact readers, so it is never in a capture; a line that names a private key is left out.
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { VERSION } from "../version";
import type { CollectedFacts } from "./facts/collect-facts";
import { type ProgramRunner, runProgram } from "./facts/fact";
import { currentPlatform, LINUX, MACOS, type PlatformName, WINDOWS } from "./platform";
import { type MachineReader, MachineTree } from "./root-path";

/** One reading of a file or folder. */
interface FileReading {
  op: "readText" | "exists" | "list" | "canonical";
  /** `live`: the running machine's tree (the tunnel), else ROOT's. */
  tree: "root" | "live";
  path: string;
  result: string | boolean | string[] | null;
}

/** One program run: its command line, exit code and output. */
interface ProgramReading {
  argv: string[];
  code: number | null;
  stdout: string;
  stderr: string;
}

/** capture.json. */
export interface Capture {
  format: 1;
  platform: PlatformName;
  agent_version: string;
  /** When it was read: replay reads the clock as it was then (a handshake's age). */
  captured_at: string;
  /** Whether ROOT was the running machine (then its live state, `wg` and `nft`, was read too). */
  is_live: boolean;
  files: FileReading[];
  programs: ProgramReading[];
}

/**
 * Registry values no fact reads that identify the licence or the owner (the product key can be decoded
 * from DigitalProductId), and lines that name a password, a secret or a private key (a proxy's password
 * in a dconf keyfile, a WireGuard `PrivateKey = ...`).
 */
const SECRET_LINE =
  /private\s*key|passw(or)?d|secret|^\s{4}(DigitalProductId\d*|ProductId|RegisteredOwner|RegisteredOrganization|BackupProductKeyDefault)\s{4}/i;

/** Leaves out what a capture must not carry (SECRET_LINE, PEM key blocks), each said in its place. */
function withoutSecrets(text: string): string {
  return text
    .replace(
      /-----BEGIN [A-Z ]*PRIVATE KEY-----[\s\S]*?-----END [A-Z ]*PRIVATE KEY-----/g,
      "(private key left out)",
    )
    .split("\n")
    .map((line) => (SECRET_LINE.test(line) ? "(a line that may name a secret left out)" : line))
    .join("\n");
}

/** A tree that records every reading it passes on. */
function recordingTree(inner: MachineReader, tree: FileReading["tree"], files: FileReading[]): MachineReader {
  const record = <T extends FileReading["result"]>(op: FileReading["op"], path: string, result: T): T => {
    files.push({ op, tree, path, result: typeof result === "string" ? withoutSecrets(result) : result });
    return result;
  };
  return {
    isLiveSystem: inner.isLiveSystem,
    readText: async (path) => record("readText", path, await inner.readText(path)),
    exists: async (path) => record("exists", path, await inner.exists(path)),
    list: async (path) => record("list", path, await inner.list(path)),
    canonical: async (path) => record("canonical", path, await inner.canonical(path)),
  };
}

/** A tree that answers from a capture; a path it does not hold is as if it were not there. */
function replayTree(capture: Capture, tree: FileReading["tree"], isLiveSystem: boolean): MachineReader {
  const find = (op: FileReading["op"], path: string) =>
    capture.files.find((entry) => entry.op === op && entry.tree === tree && entry.path === path);
  return {
    isLiveSystem,
    readText: async (path) => (find("readText", path)?.result as string | null | undefined) ?? null,
    exists: async (path) => (find("exists", path)?.result as boolean | undefined) ?? false,
    list: async (path) => (find("list", path)?.result as string[] | null | undefined) ?? null,
    canonical: async (path) => {
      const found = find("canonical", path);
      if (found === undefined) throw new Error(`${path}: not in the capture`);
      return found.result as string;
    },
  };
}

/** A program runner that answers from a capture (the same command line, in the order recorded). */
function replayRunner(capture: Capture): ProgramRunner {
  const used = new Set<number>();
  return async (argv) => {
    const key = JSON.stringify(argv);
    const index = capture.programs.findIndex(
      (entry, at) => !used.has(at) && JSON.stringify(entry.argv) === key,
    );
    const fallback = capture.programs.findIndex((entry) => JSON.stringify(entry.argv) === key);
    const found = index >= 0 ? index : fallback;
    if (found < 0) return { code: 127, stdout: "", stderr: `${argv[0]}: not in the capture` };
    used.add(found);
    const entry = capture.programs[found] as ProgramReading;
    return { code: entry.code, stdout: entry.stdout, stderr: entry.stderr };
  };
}

/** A file name for a reading, for the folder's people-readable copies. */
function fileNameOf(index: number, argv: string[]): string {
  const words = argv
    .slice(0, 4)
    .join("-")
    .replace(/[^A-Za-z0-9._-]+/g, "_")
    .slice(0, 60);
  return `${String(index + 1).padStart(2, "0")}-${words}.txt`;
}

const README = `A capture of what the Bulwark agent reads on a machine to report its facts (bulwark agent capture).
Read it back with: bulwark agent facts --from-capture <this folder>
capture.json holds every reading in the order it was made (replay reads it); programs/ and files/ are
copies for people. The agent's state folder (keys, token) is never read for facts, so it is not here.
`;

/**
 * Reads the facts of this machine (ROOT `root`) once, recording every reading, and writes the capture to
 * `folder`; returns the facts as read.
 */
export async function captureFacts(
  root: string,
  folder: string,
  platform = currentPlatform(),
): Promise<CollectedFacts> {
  const isLive = platform.name === "windows" || (await MachineTree.open(root)).isLiveSystem;
  const capture: Capture = {
    format: 1,
    platform: platform.name,
    agent_version: VERSION,
    captured_at: new Date().toISOString(),
    is_live: isLive,
    files: [],
    programs: [],
  };
  const recordingRunner: ProgramRunner = async (argv) => {
    const result = await runProgram(argv);
    capture.programs.push({
      argv,
      code: result.code,
      stdout: withoutSecrets(result.stdout),
      stderr: withoutSecrets(result.stderr),
    });
    return result;
  };
  const nowSeconds = Math.floor(Date.parse(capture.captured_at) / 1000);
  const options = { liveTunnel: true, runProgram: recordingRunner, nowSeconds: () => nowSeconds };
  // Linux and macOS read files through the tree (SystemVersion.plist, the tunnel's name file), recorded.
  const collected =
    platform.name !== "windows"
      ? await platform.collectFacts(root, {
          ...options,
          tree: recordingTree(await MachineTree.open(root), "root", capture.files),
          liveTree: recordingTree(await MachineTree.open("/"), "live", capture.files),
        })
      : await platform.collectFacts(root, options);
  // Readable by whoever ran it only (root, an administrator): it describes the machine in detail.
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  writeFileSync(join(folder, "capture.json"), `${JSON.stringify(capture, null, 2)}\n`, { mode: 0o600 });
  writeFileSync(join(folder, "README.txt"), README, { mode: 0o600 });
  capture.programs.forEach((entry, index) => {
    const path = join(folder, "programs", fileNameOf(index, entry.argv));
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileSync(
      path,
      `$ ${entry.argv.join(" ")}\n# exit ${entry.code}\n${entry.stdout}${entry.stderr ? `\n# stderr\n${entry.stderr}` : ""}`,
      { mode: 0o600 },
    );
  });
  for (const entry of capture.files) {
    if (entry.op !== "readText" || typeof entry.result !== "string") continue;
    const path = join(
      folder,
      "files",
      entry.tree,
      ...entry.path.split("/").filter((part) => part && part !== ".."),
    );
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileSync(path, entry.result, { mode: 0o600 });
  }
  return collected;
}

/** A folder that holds no capture this agent can read (exit 2, one line). */
export class CaptureError extends Error {
  readonly exitCode = 2;
}

/** Reads a capture folder (its capture.json), or throws saying what is wrong with it. */
export function readCapture(folder: string): Capture {
  let capture: Capture;
  try {
    capture = JSON.parse(readFileSync(join(folder, "capture.json"), "utf8")) as Capture;
  } catch (error) {
    throw new CaptureError(`${folder} holds no capture: ${(error as Error).message}`);
  }
  if (capture.format !== 1 || !Array.isArray(capture.files) || !Array.isArray(capture.programs))
    throw new CaptureError(`${join(folder, "capture.json")} is not a capture this agent can read`);
  return capture;
}

/** The facts a capture gives, read by the readers of its platform as they were on that machine. */
export async function factsFromCapture(folder: string): Promise<CollectedFacts> {
  const capture = readCapture(folder);
  const nowSeconds = Math.floor(Date.parse(capture.captured_at) / 1000);
  const options = { liveTunnel: true, runProgram: replayRunner(capture), nowSeconds: () => nowSeconds };
  if (capture.platform === "windows") return await WINDOWS.collectFacts("", options);
  return await (capture.platform === "macos" ? MACOS : LINUX).collectFacts("/", {
    ...options,
    isLive: capture.is_live,
    tree: replayTree(capture, "root", capture.is_live),
    liveTree: replayTree(capture, "live", true),
  });
}
