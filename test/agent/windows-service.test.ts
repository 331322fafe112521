/**
 * The Windows agent as a SYSTEM scheduled task (src/agent/windows/service.ts): the task definition, the
 * state folder's ACL check, and install/remove as the commands they run. Then against Wine 8.0's own
 * schtasks and icacls, in one prefix for the file.
 *
 * What Wine 8.0 can show (read in its source, programs/schtasks/schtasks.c and dlls/taskschd, and seen
 * here): `schtasks /Create /XML /TN /F` and `/Delete` are real, through its Task Scheduler service,
 * which stores the definition in C:\windows\system32\tasks\Bulwark\Agent, as Windows does; `/Query`,
 * `/Run` and `/End` are "unsupported" and exit 0 doing nothing, so the stored definition is read
 * instead of `/Query /XML`. Its taskschd parses RegistrationInfo and Settings but not triggers, actions,
 * the principal (stubs) nor RestartOnFailure: those are checked on our XML (below) and, if a Wine keeps
 * them, against what it stored. Its icacls is a stub ("dummy icacls, not performing ACL
 * manipulations"): it prints nothing and exits 0, so no ACL can be seen under Wine.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { DOMParser } from "@xmldom/xmldom";
import type { CommandResult, CommandRunner } from "../../src/agent/enforce/apply";
import {
  agentTaskXml,
  type InstalledWindowsService,
  installWindowsService,
  parseIcaclsListing,
  quoteWindowsArgument,
  removeWindowsService,
  restrictToAdministrators,
  TASK_NAME,
  taskDefinitionBytes,
  windowsAgentPaths,
} from "../../src/agent/windows/service";
import {
  createWinePrefix,
  removeWinePrefix,
  runUnderWine,
  type WinePrefix,
  windowsPathOf,
} from "../helpers/wine";

const TASK_NAMESPACE = "http://schemas.microsoft.com/windows/2004/02/mit/task";
const SCHTASKS = "C:\\Windows\\System32\\schtasks.exe";
const ICACLS = "C:\\Windows\\System32\\icacls.exe";

/** Parses `xml`, failing on any error or warning of the parser (so: well-formed or the test fails). */
function parseStrictly(xml: string): Document {
  const problems: string[] = [];
  const record = (message: string) => problems.push(message);
  const document = new DOMParser({
    errorHandler: { warning: record, error: record, fatalError: record },
  }).parseFromString(xml, "text/xml");
  if (problems.length > 0) throw new Error(`not well-formed: ${problems.join("; ")}`);
  return document as unknown as Document;
}

/** The element at `path` (local names, from the root's children) in the task namespace, or null. */
function elementAt(document: Document, path: string[]): Element | null {
  let current: Element | null = document.documentElement;
  for (const name of path) {
    const parent: Element | null = current;
    const children: Element[] = parent
      ? Array.from(parent.childNodes).filter((node): node is Element => node.nodeType === 1)
      : [];
    current = children.find((child) => child.localName === name) ?? null;
    if (current !== null && current.namespaceURI !== TASK_NAMESPACE)
      throw new Error(`${name} is not in the task namespace`);
  }
  return current;
}

function textAt(document: Document, path: string[]): string | null {
  return elementAt(document, path)?.textContent ?? null;
}

/**
 * A command line split as the Microsoft C runtime does (CommandLineToArgvW, 2008 rules): 2n backslashes
 * before a quote are n backslashes and the quote delimits, 2n+1 are n and a literal quote, `""` inside
 * quotes is a quote.
 */
function splitWindowsCommandLine(line: string): string[] {
  const parts: string[] = [];
  let index = 0;
  while (index < line.length) {
    while (line[index] === " " || line[index] === "\t") index += 1;
    if (index >= line.length) break;
    let part = "";
    let isQuoted = false;
    while (index < line.length && (isQuoted || (line[index] !== " " && line[index] !== "\t"))) {
      const character = line[index];
      if (character === "\\") {
        let backslashes = 0;
        while (line[index] === "\\") {
          backslashes += 1;
          index += 1;
        }
        if (line[index] === '"') {
          part += "\\".repeat(Math.floor(backslashes / 2));
          if (backslashes % 2 === 1) {
            part += '"';
            index += 1;
          }
        } else part += "\\".repeat(backslashes);
      } else if (character === '"') {
        if (isQuoted && line[index + 1] === '"') {
          part += '"';
          index += 2;
        } else {
          isQuoted = !isQuoted;
          index += 1;
        }
      } else {
        part += character;
        index += 1;
      }
    }
    parts.push(part);
  }
  return parts;
}

const PROGRAM = "C:\\Program Files\\Bulwark & Co\\bulwark.exe";
const STATE = "D:\\Bulwark State & <Co>";

describe("the task definition", () => {
  const xml = agentTaskXml({ executable: PROGRAM, stateDir: STATE });
  const document = parseStrictly(xml);

  test("is well-formed, declared UTF-16, Task Scheduler schema 1.2, with Windows line ends", () => {
    expect(xml.startsWith('<?xml version="1.0" encoding="UTF-16"?>\r\n')).toBe(true);
    expect(xml.replaceAll("\r\n", "").includes("\n")).toBe(false);
    expect(document.documentElement.localName).toBe("Task");
    expect(document.documentElement.namespaceURI).toBe(TASK_NAMESPACE);
    expect(document.documentElement.getAttribute("version")).toBe("1.2");
    expect(textAt(document, ["RegistrationInfo", "URI"])).toBe(`\\${TASK_NAME}`);
  });

  test("starts at boot and every minute for ever, as SYSTEM by SID with the highest run level", () => {
    expect(textAt(document, ["Triggers", "BootTrigger", "Enabled"])).toBe("true");
    // The minute's trigger is what restarts an agent that exited: RestartOnFailure only retries a start.
    expect(textAt(document, ["Triggers", "TimeTrigger", "Repetition", "Interval"])).toBe("PT1M");
    expect(elementAt(document, ["Triggers", "TimeTrigger", "Repetition", "Duration"])).toBeNull();
    expect(textAt(document, ["Triggers", "TimeTrigger", "Repetition", "StopAtDurationEnd"])).toBe("false");
    expect(textAt(document, ["Triggers", "TimeTrigger", "StartBoundary"])).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d$/,
    );
    expect(textAt(document, ["Principals", "Principal", "UserId"])).toBe("S-1-5-18");
    expect(textAt(document, ["Principals", "Principal", "RunLevel"])).toBe("HighestAvailable");
    const principalId = elementAt(document, ["Principals", "Principal"])?.getAttribute("id");
    expect(elementAt(document, ["Actions"])?.getAttribute("Context")).toBe(principalId ?? "missing");
  });

  test("runs for ever, once, on battery too, restarting a failed start every minute up to the schema's 255", () => {
    const setting = (name: string) => textAt(document, ["Settings", name]);
    expect(setting("ExecutionTimeLimit")).toBe("PT0S");
    expect(setting("MultipleInstancesPolicy")).toBe("IgnoreNew");
    expect(setting("DisallowStartIfOnBatteries")).toBe("false");
    expect(setting("StopIfGoingOnBatteries")).toBe("false");
    expect(setting("StartWhenAvailable")).toBe("true");
    expect(setting("RunOnlyIfNetworkAvailable")).toBe("false");
    expect(setting("RunOnlyIfIdle")).toBe("false");
    expect(setting("Hidden")).toBe("false");
    expect(setting("Enabled")).toBe("true");
    expect(setting("AllowStartOnDemand")).toBe("true");
    expect(setting("AllowHardTerminate")).toBe("true");
    expect(textAt(document, ["Settings", "RestartOnFailure", "Interval"])).toBe("PT1M");
    // restartType: Count is an unsignedByte of at least 1, Interval between PT1M and P31D.
    expect(textAt(document, ["Settings", "RestartOnFailure", "Count"])).toBe("255");
  });

  test("the action is the quoted executable with agent run --state-dir and the quoted folder, & escaped", () => {
    expect(textAt(document, ["Actions", "Exec", "Command"])).toBe(`"${PROGRAM}"`);
    const argumentsLine = textAt(document, ["Actions", "Exec", "Arguments"]) ?? "";
    expect(argumentsLine).toBe(`agent run --state-dir "${STATE}"`);
    expect(splitWindowsCommandLine(`"${PROGRAM}" ${argumentsLine}`)).toEqual([
      PROGRAM,
      "agent",
      "run",
      "--state-dir",
      STATE,
    ]);
    expect(xml).toContain("Bulwark &amp; Co");
    expect(xml).toContain("D:\\Bulwark State &amp; &lt;Co&gt;");
  });

  test("a path the task cannot carry (a quote, a %VARIABLE% it would expand) is refused", () => {
    expect(() => agentTaskXml({ executable: PROGRAM, stateDir: "C:\\%TEMP%\\Bulwark" })).toThrow(
      "cannot be started by the task",
    );
    expect(() => agentTaskXml({ executable: 'C:\\a"b.exe', stateDir: STATE })).toThrow(
      "cannot be started by the task",
    );
  });

  test("is written UTF-16 LE after a byte-order mark, as schtasks reads it", () => {
    const bytes = taskDefinitionBytes(xml);
    expect([...bytes.subarray(0, 4)]).toEqual([0xff, 0xfe, 0x3c, 0x00]);
    expect(Buffer.from(bytes.subarray(2)).toString("utf16le")).toBe(xml);
  });
});

test("quoteWindowsArgument survives the C runtime's splitting: trailing backslashes, quotes, spaces", () => {
  for (const argument of [
    "C:\\",
    "C:\\dir with space\\",
    "D:\\Bulwark State & Co",
    'a"b',
    'a\\"b',
    "a\\\\b\\\\",
    "",
    "ünïcode \\ path",
  ]) {
    const quoted = quoteWindowsArgument(argument);
    expect(splitWindowsCommandLine(`x.exe ${quoted} next`)).toEqual(["x.exe", argument, "next"]);
  }
  expect(quoteWindowsArgument("C:\\")).toBe('"C:\\\\"');
});

test("the paths come from ProgramFiles and ProgramData, with Windows' defaults", () => {
  expect(windowsAgentPaths({ ProgramFiles: "/pf", ProgramData: "/pd" })).toEqual({
    installFolder: "/pf/Bulwark",
    executable: "/pf/Bulwark/bulwark.exe",
    stateDir: "/pd/Bulwark",
  });
  const defaults = windowsAgentPaths({});
  expect(defaults.executable.startsWith("C:\\Program Files")).toBe(true);
  expect(defaults.executable.endsWith("bulwark.exe")).toBe(true);
  expect(defaults.stateDir.startsWith("C:\\ProgramData")).toBe(true);
});

/**
 * icacls listings. Microsoft's icacls reference (windows-server/administration/windows-commands/icacls)
 * documents the entry format `NAME:(inheritance)(rights)` and the (I), (OI), (CI), (IO) flags but shows
 * no listing; the entries of UNRESTRICTED are those Microsoft's Azure Files documentation lists in that
 * format for a share's root folder (includes/storage-files-aad-permissions-and-mounting.md in
 * MicrosoftDocs/azure-docs), laid out as icacls prints a folder: the path and the first entry, one
 * indented entry a line, a blank line, the summary.
 */
function listing(path: string, entries: string[]): string {
  const indent = " ".repeat(path.length + 1);
  const lines = entries.map((entry, index) => (index === 0 ? `${path} ${entry}` : `${indent}${entry}`));
  return `${lines.join("\r\n")}\r\n\r\nSuccessfully processed 1 files; Failed processing 0 files\r\n`;
}

const UNRESTRICTED = [
  "BUILTIN\\Administrators:(OI)(CI)(F)",
  "NT AUTHORITY\\SYSTEM:(OI)(CI)(F)",
  "BUILTIN\\Users:(RX)",
  "BUILTIN\\Users:(OI)(CI)(IO)(GR,GE)",
  "NT AUTHORITY\\Authenticated Users:(OI)(CI)(M)",
  "NT AUTHORITY\\SYSTEM:(F)",
  "CREATOR OWNER:(OI)(CI)(IO)(F)",
];
const RESTRICTED = ["NT AUTHORITY\\SYSTEM:(OI)(CI)(F)", "BUILTIN\\Administrators:(OI)(CI)(F)"];

test("an icacls listing is read entry by entry, names with spaces included", () => {
  const path = "C:\\ProgramData\\Bulwark";
  expect(parseIcaclsListing(listing(path, UNRESTRICTED), path)).toEqual(
    UNRESTRICTED.map((entry) => {
      const at = entry.indexOf(":(");
      return { principal: entry.slice(0, at), rights: entry.slice(at + 1) };
    }),
  );
  expect(parseIcaclsListing("", path)).toEqual([]);
  expect(parseIcaclsListing("Successfully processed 0 files; Failed processing 1 files\r\n", path)).toEqual(
    [],
  );
});

/** A runner that records each argv and answers from `answer` (exit 0, no output, by default). */
function recordingRunner(answer: (argv: string[]) => Partial<CommandResult> = () => ({})): {
  runner: CommandRunner;
  calls: string[][];
} {
  const calls: string[][] = [];
  return {
    calls,
    runner: async (argv) => {
      calls.push(argv);
      return { exitCode: 0, stdout: "", stderr: "", ...answer(argv) };
    },
  };
}

/** icacls' listing of the folder it is asked about; other commands exit 0. */
function listingRunner(entries: string[]) {
  return recordingRunner((argv) =>
    argv[0] === ICACLS && argv.length === 2 ? { stdout: listing(argv[1] ?? "", entries) } : {},
  );
}

const ENV = { SystemRoot: "C:\\Windows" };

describe("restrictToAdministrators", () => {
  const path = "C:\\ProgramData\\Bulwark";

  test("makes Administrators the owner, grants SYSTEM and Administrators by SID, and reads it back", async () => {
    const { runner, calls } = listingRunner(RESTRICTED);
    await restrictToAdministrators(path, runner, ENV);
    expect(calls).toEqual([
      [ICACLS, path, "/setowner", "*S-1-5-32-544"],
      [ICACLS, path, "/inheritance:r", "/grant:r", "*S-1-5-18:(OI)(CI)F", "*S-1-5-32-544:(OI)(CI)F"],
      [ICACLS, path],
    ]);
  });

  test("a Windows in another language names them otherwise: two full inheritable entries are still them", async () => {
    const { runner } = listingRunner([
      "NT-AUTORITÄT\\SYSTEM:(OI)(CI)(F)",
      "VORDEFINIERT\\Administratoren:(OI)(CI)(F)",
    ]);
    await restrictToAdministrators(path, runner, ENV);
  });

  test("anyone else still listed fails, naming them", async () => {
    const { runner } = listingRunner(UNRESTRICTED);
    const failure = restrictToAdministrators(path, runner, ENV);
    await expect(failure).rejects.toThrow(`${path} is not restricted to SYSTEM and Administrators`);
    await expect(restrictToAdministrators(path, runner, ENV)).rejects.toThrow(
      "BUILTIN\\Users:(RX), BUILTIN\\Users:(OI)(CI)(IO)(GR,GE), NT AUTHORITY\\Authenticated Users:(OI)(CI)(M), NT AUTHORITY\\SYSTEM:(F), CREATOR OWNER:(OI)(CI)(IO)(F)",
    );
    const inherited = listingRunner([
      "NT AUTHORITY\\SYSTEM:(I)(OI)(CI)(F)",
      "BUILTIN\\Administrators:(I)(OI)(CI)(F)",
    ]);
    await expect(restrictToAdministrators(path, inherited.runner, ENV)).rejects.toThrow(
      "NT AUTHORITY\\SYSTEM:(I)(OI)(CI)(F), BUILTIN\\Administrators:(I)(OI)(CI)(F)",
    );
  });

  test("an icacls that prints no listing (Wine's stub) fails rather than passes", async () => {
    const { runner } = recordingRunner();
    await expect(restrictToAdministrators(path, runner, ENV)).rejects.toThrow(
      `icacls ${path} printed no access list, so its access cannot be checked`,
    );
  });

  test("a refused grant names the command and its output", async () => {
    const { runner, calls } = recordingRunner((argv) =>
      argv.includes("/grant:r")
        ? { exitCode: 5, stderr: "C:\\ProgramData\\Bulwark: Access is denied.\r\n" }
        : {},
    );
    await expect(restrictToAdministrators(path, runner, ENV)).rejects.toThrow(
      "icacls C:\\ProgramData\\Bulwark /inheritance:r /grant:r *S-1-5-18:(OI)(CI)F *S-1-5-32-544:(OI)(CI)F failed (exit 5: C:\\ProgramData\\Bulwark: Access is denied.)",
    );
    expect(calls).toHaveLength(2);
  });
});

const temporaryFolders: string[] = [];
afterAll(() => {
  for (const folder of temporaryFolders) rmSync(folder, { recursive: true, force: true });
});

/** A Windows of folders under a temporary folder: ProgramFiles, ProgramData, and a downloaded bulwark.exe. */
function machine() {
  const root = mkdtempSync(join(tmpdir(), "bulwark-windows-service-"));
  temporaryFolders.push(root);
  const env = {
    ProgramFiles: join(root, "Program Files"),
    ProgramData: join(root, "ProgramData"),
    SystemRoot: "C:\\Windows",
  };
  const download = join(root, "Downloads", "bulwark.exe");
  mkdirSync(join(root, "Downloads"));
  writeFileSync(download, "the agent, version 1");
  return { root, env, download, paths: windowsAgentPaths(env) };
}

describe("installWindowsService and removeWindowsService", () => {
  test("install: end, copy, restrict, write the definition, register, start; the record has the SHA-256s", async () => {
    const { env, download, paths } = machine();
    const definition = join(paths.stateDir, "agent-task.xml");
    const seen: { definitionAtAcl: boolean[]; definitionAtCreate: string | null } = {
      definitionAtAcl: [],
      definitionAtCreate: null,
    };
    const { runner, calls } = recordingRunner((argv) => {
      if (argv[0] === ICACLS) seen.definitionAtAcl.push(existsSync(definition));
      if (argv[1] === "/Create") seen.definitionAtCreate = readFileSync(definition).toString("hex");
      return argv[0] === ICACLS && argv.length === 2 ? { stdout: listing(argv[1] ?? "", RESTRICTED) } : {};
    });

    const { record, lines } = await installWindowsService({ executableSource: download, env, runner });

    expect(calls).toEqual([
      [SCHTASKS, "/End", "/TN", "Bulwark\\Agent"],
      [ICACLS, paths.stateDir, "/setowner", "*S-1-5-32-544"],
      [
        ICACLS,
        paths.stateDir,
        "/inheritance:r",
        "/grant:r",
        "*S-1-5-18:(OI)(CI)F",
        "*S-1-5-32-544:(OI)(CI)F",
      ],
      [ICACLS, paths.stateDir],
      [SCHTASKS, "/Create", "/TN", "Bulwark\\Agent", "/XML", definition, "/F"],
      [SCHTASKS, "/Run", "/TN", "Bulwark\\Agent"],
    ]);
    // The folder was restricted before anything was written in it.
    expect(seen.definitionAtAcl).toEqual([false, false, false]);
    const bytes = taskDefinitionBytes(
      agentTaskXml({ executable: paths.executable, stateDir: paths.stateDir }),
    );
    expect(seen.definitionAtCreate).toBe(Buffer.from(bytes).toString("hex"));
    expect(readFileSync(paths.executable, "utf8")).toBe("the agent, version 1");
    const sha256 = (content: string | Uint8Array) =>
      new Bun.CryptoHasher("sha256").update(content).digest("hex");
    expect(record).toEqual({
      kind: "windows-scheduled-task",
      task: "Bulwark\\Agent",
      definition: { path: definition, sha256: sha256(bytes) },
      executable: { path: paths.executable, sha256: sha256("the agent, version 1") },
      installFolder: paths.installFolder,
    });
    expect(lines.join("\n")).toContain(`Installed ${paths.executable}, a copy of ${download}`);

    // Again with the same executable: nothing copied, the earlier copy still recorded as this install's.
    const again = await installWindowsService({ executableSource: download, env, runner, previous: record });
    expect(again.record).toEqual(record);
    expect(again.lines).toContain(`${paths.executable} is already this executable`);

    // An executable that was there before and not copied by install-service is not recorded.
    const foreign = await installWindowsService({ executableSource: paths.executable, env, runner });
    expect(foreign.record.executable).toBeNull();
  });

  test("a failing schtasks /Create names the command and its output, and what this run made is gone", async () => {
    const { env, download, paths } = machine();
    const { runner, calls } = recordingRunner((argv) => {
      if (argv[1] === "/Create")
        return {
          exitCode: 1,
          stdout: "ERROR: The task XML is malformed.\r\n(1,2)::ERROR: incorrect document syntax\r\n",
        };
      return argv[0] === ICACLS && argv.length === 2 ? { stdout: listing(argv[1] ?? "", RESTRICTED) } : {};
    });
    const definition = join(paths.stateDir, "agent-task.xml");
    await expect(installWindowsService({ executableSource: download, env, runner })).rejects.toThrow(
      `schtasks /Create /TN Bulwark\\Agent /XML ${definition} /F failed (exit 1: ERROR: The task XML is malformed.\n(1,2)::ERROR: incorrect document syntax); what this run changed is undone`,
    );
    expect(calls.map((argv) => argv[1])).toEqual([
      "/End",
      paths.stateDir,
      paths.stateDir,
      paths.stateDir,
      "/Create",
    ]);
    expect(existsSync(paths.executable)).toBe(false);
    expect(existsSync(paths.installFolder)).toBe(false);
    expect(existsSync(paths.stateDir)).toBe(false);
  });

  test("a failing schtasks /Run deletes the task this run registered", async () => {
    const { env, download, paths } = machine();
    const { runner, calls } = recordingRunner((argv) => {
      if (argv[1] === "/Run") return { exitCode: 1, stderr: "ERROR: Access is denied.\r\n" };
      return argv[0] === ICACLS && argv.length === 2 ? { stdout: listing(argv[1] ?? "", RESTRICTED) } : {};
    });
    await expect(installWindowsService({ executableSource: download, env, runner })).rejects.toThrow(
      "schtasks /Run /TN Bulwark\\Agent failed (exit 1: ERROR: Access is denied.)",
    );
    expect(calls.at(-1)).toEqual([SCHTASKS, "/Delete", "/TN", "Bulwark\\Agent", "/F"]);
    expect(existsSync(paths.executable)).toBe(false);
  });

  test("an unrestricted state folder stops the install before the task is registered", async () => {
    const { env, download, paths } = machine();
    const { runner, calls } = listingRunner(UNRESTRICTED);
    await expect(installWindowsService({ executableSource: download, env, runner })).rejects.toThrow(
      `${paths.stateDir} is not restricted to SYSTEM and Administrators`,
    );
    expect(calls.some((argv) => argv[1] === "/Create")).toBe(false);
  });

  /** Installs with a runner that answers icacls with the restricted listing; returns the record. */
  async function installed(): Promise<{
    record: InstalledWindowsService;
    paths: ReturnType<typeof machine>["paths"];
  }> {
    const { env, download, paths } = machine();
    const { runner } = listingRunner(RESTRICTED);
    return {
      record: (await installWindowsService({ executableSource: download, env, runner })).record,
      paths,
    };
  }

  test("remove: ends and deletes the task, then the executable, the definition and the empty folder", async () => {
    const { record, paths } = await installed();
    const { runner, calls } = recordingRunner();
    const lines = await removeWindowsService(record, runner, { env: ENV });
    expect(calls).toEqual([
      [SCHTASKS, "/End", "/TN", "Bulwark\\Agent"],
      [SCHTASKS, "/Delete", "/TN", "Bulwark\\Agent", "/F"],
    ]);
    expect(existsSync(paths.executable)).toBe(false);
    expect(existsSync(record.definition.path)).toBe(false);
    expect(existsSync(paths.installFolder)).toBe(false);
    expect(lines).toEqual([
      "Deleted the scheduled task Bulwark\\Agent",
      `Removed ${paths.executable}`,
      `Removed ${record.definition.path}`,
      `Removed ${paths.installFolder}`,
    ]);
  });

  test("remove leaves an executable that changed since, and so its folder", async () => {
    const { record, paths } = await installed();
    writeFileSync(paths.executable, "replaced by someone");
    const lines = await removeWindowsService(record, recordingRunner().runner, { env: ENV });
    expect(readFileSync(paths.executable, "utf8")).toBe("replaced by someone");
    expect(lines).toContain(`${paths.executable} changed since install-service: left as it is`);
    expect(lines).toContain(`${paths.installFolder} is not empty: left`);
  });

  test("a task already gone is fine; one that could not be deleted fails with schtasks' output", async () => {
    const { record } = await installed();
    const gone = recordingRunner((argv) =>
      argv[1] === "/Delete" || argv[1] === "/Query" ? { exitCode: 1 } : {},
    );
    expect(await removeWindowsService(record, gone.runner, { env: ENV })).toContain(
      "The scheduled task Bulwark\\Agent was already gone",
    );

    const second = await installed();
    const refused = recordingRunner((argv) =>
      argv[1] === "/Delete" ? { exitCode: 1, stderr: "ERROR: Access is denied.\r\n" } : {},
    );
    await expect(removeWindowsService(second.record, refused.runner, { env: ENV })).rejects.toThrow(
      "schtasks /Delete /TN Bulwark\\Agent /F failed (exit 1: ERROR: Access is denied.); run bulwark agent unenroll again",
    );
    expect(existsSync(second.paths.executable)).toBe(true);
  });

  test("from the task itself, it is not ended (that would end this process)", async () => {
    const { record } = await installed();
    const { runner, calls } = recordingRunner();
    await removeWindowsService(record, runner, { env: ENV, fromService: true });
    expect(calls).toEqual([[SCHTASKS, "/Delete", "/TN", "Bulwark\\Agent", "/F"]]);
  });
});

const hasWine = Bun.which("wine") !== null && Bun.which("x86_64-w64-mingw32-ld") !== null;

describe.skipIf(!hasWine)("against Wine 8.0's schtasks and icacls", () => {
  let prefix: WinePrefix;
  beforeAll(() => {
    prefix = createWinePrefix();
  }, 120_000);
  afterAll(() => {
    if (prefix) removeWinePrefix(prefix);
  });

  /** Where Wine's Task Scheduler service keeps the task's definition (Windows keeps it there too). */
  const storedDefinition = () => join(prefix.driveC, "windows", "system32", "tasks", "Bulwark", "Agent");

  /** A path of this machine as Wine's programs name it: C: for the prefix's drive, else Z:. */
  function wineArgument(argument: string): string {
    if (argument.startsWith(`${prefix.driveC}/`))
      return `C:\\${argument.slice(prefix.driveC.length + 1).replaceAll("/", "\\")}`;
    // A path has a folder: `/Create` and `/F` are options.
    return /^\/[^/]+\//.test(argument) ? windowsPathOf(argument) : argument;
  }

  /** Runs each command under Wine; `icacls` may be answered otherwise (`icaclsAnswer`). */
  function wineRunner(calls: string[][], icaclsAnswer?: (argv: string[]) => CommandResult): CommandRunner {
    return async (argv) => {
      calls.push(argv);
      if (icaclsAnswer && argv[0]?.toLowerCase().endsWith("icacls.exe")) return icaclsAnswer(argv);
      const result = await runUnderWine(prefix, argv.map(wineArgument));
      return { exitCode: result.code, stdout: result.stdout, stderr: result.stderr };
    };
  }

  function readStoredDefinition(): Document {
    return parseStrictly(readFileSync(storedDefinition(), "utf8").replace(/^\uFEFF/, ""));
  }

  test("install registers the definition with Wine's schtasks /Create /XML, and remove deletes it", async () => {
    const env = {
      ProgramFiles: join(prefix.driveC, "Program Files"),
      ProgramData: join(prefix.driveC, "ProgramData"),
      SystemRoot: "C:\\windows",
    };
    const downloads = mkdtempSync(join(tmpdir(), "bulwark-download-"));
    temporaryFolders.push(downloads);
    const download = join(downloads, "bulwark.exe");
    writeFileSync(download, "the agent");
    const calls: string[][] = [];
    // Wine's icacls is a stub (the next test): its listing is answered as Windows prints a restricted folder.
    const runner = wineRunner(calls, (argv) => ({
      exitCode: 0,
      stdout: argv.length === 2 ? listing(argv[1] ?? "", RESTRICTED) : "",
      stderr: "",
    }));
    const { record } = await installWindowsService({ executableSource: download, env, runner });
    const paths = windowsAgentPaths(env);
    const ours = parseStrictly(agentTaskXml({ executable: paths.executable, stateDir: paths.stateDir }));

    expect(existsSync(storedDefinition())).toBe(true);
    const stored = readStoredDefinition();
    expect(textAt(stored, ["RegistrationInfo", "URI"])).toBe("\\Bulwark\\Agent");
    expect(textAt(stored, ["RegistrationInfo", "Description"])).toBe(
      textAt(ours, ["RegistrationInfo", "Description"]),
    );
    // The settings Wine's taskschd implements, as schtasks registered them from our file.
    for (const [name, value] of [
      ["MultipleInstancesPolicy", "IgnoreNew"],
      ["DisallowStartIfOnBatteries", "false"],
      ["StopIfGoingOnBatteries", "false"],
      ["StartWhenAvailable", "true"],
      ["ExecutionTimeLimit", "PT0S"],
      ["Hidden", "false"],
      ["Enabled", "true"],
      ["AllowStartOnDemand", "true"],
      ["AllowHardTerminate", "true"],
      ["RunOnlyIfNetworkAvailable", "false"],
    ] as const)
      expect({ name, value: textAt(stored, ["Settings", name]) }).toEqual({ name, value });
    // Wine 8.0 drops triggers, the principal, RestartOnFailure and the action (stubs); a Wine that keeps
    // them must have kept ours.
    for (const path of [
      ["Triggers", "BootTrigger", "Enabled"],
      ["Triggers", "TimeTrigger", "Repetition", "Interval"],
      ["Principals", "Principal", "UserId"],
      ["Principals", "Principal", "RunLevel"],
      ["Settings", "RestartOnFailure", "Interval"],
      ["Settings", "RestartOnFailure", "Count"],
      ["Actions", "Exec", "Command"],
      ["Actions", "Exec", "Arguments"],
    ]) {
      const kept = textAt(stored, path);
      if (kept !== null) expect({ path, kept }).toEqual({ path, kept: textAt(ours, path) ?? "missing" });
    }
    expect(readFileSync(join(prefix.driveC, "Program Files", "Bulwark", "bulwark.exe"), "utf8")).toBe(
      "the agent",
    );

    const lines = await removeWindowsService(record, runner, { env });
    expect(lines[0]).toBe("Deleted the scheduled task Bulwark\\Agent");
    expect(existsSync(storedDefinition())).toBe(false);
    expect(existsSync(paths.installFolder)).toBe(false);
    expect(existsSync(record.definition.path)).toBe(false);
    // Deleting it again fails: it really is gone from Wine's Task Scheduler.
    const again = await runUnderWine(prefix, [SCHTASKS, "/Delete", "/TN", TASK_NAME, "/F"]);
    expect(again.code).not.toBe(0);
  }, 120_000);

  test("the UTF-16 file carries text that is not ASCII intact; a file without the byte-order mark is refused", async () => {
    const folder = join(prefix.driveC, "encoding");
    mkdirSync(folder, { recursive: true });
    const description = "Bulwark Ägent für Geräte – ü";
    const xml = agentTaskXml({
      executable: "C:\\Program Files\\Bulwark\\bulwark.exe",
      stateDir: "C:\\ProgramData\\Bulwark",
    }).replace(/<Description>[^<]*<\/Description>/, `<Description>${description}</Description>`);
    const create = (file: string) =>
      runUnderWine(prefix, [SCHTASKS, "/Create", "/TN", TASK_NAME, "/XML", `C:\\encoding\\${file}`, "/F"]);

    writeFileSync(join(folder, "with-bom.xml"), taskDefinitionBytes(xml));
    expect((await create("with-bom.xml")).code).toBe(0);
    expect(textAt(readStoredDefinition(), ["RegistrationInfo", "Description"])).toBe(description);
    expect((await runUnderWine(prefix, [SCHTASKS, "/Delete", "/TN", TASK_NAME, "/F"])).code).toBe(0);

    // The same UTF-16 without its mark is read in the ANSI code page: not XML any more.
    writeFileSync(join(folder, "no-bom.xml"), Buffer.from(xml, "utf16le"));
    expect((await create("no-bom.xml")).code).not.toBe(0);
    expect(existsSync(storedDefinition())).toBe(false);
    // And exit 0 above meant parsed: a cut definition is refused.
    writeFileSync(join(folder, "cut.xml"), taskDefinitionBytes(xml.slice(0, -30)));
    expect((await create("cut.xml")).code).not.toBe(0);
    expect(existsSync(storedDefinition())).toBe(false);
    rmSync(folder, { recursive: true, force: true });
  }, 120_000);

  test("Wine's icacls is a stub that prints nothing: the read-back refuses it instead of passing", async () => {
    mkdirSync(join(prefix.driveC, "ProgramData", "Stub"), { recursive: true });
    const calls: string[][] = [];
    const path = "C:\\ProgramData\\Stub";
    await expect(
      restrictToAdministrators(path, wineRunner(calls), { SystemRoot: "C:\\windows" }),
    ).rejects.toThrow(`icacls ${path} printed no access list, so its access cannot be checked (output: "")`);
    // All three ran under Wine and exited 0 (a stub's success), so only the read-back could tell.
    expect(calls.map((argv) => argv.slice(1, 3))).toEqual([
      [path, "/setowner"],
      [path, "/inheritance:r"],
      [path],
    ]);
  }, 120_000);
});
