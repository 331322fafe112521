/**
 * The device agent's commands (`bulwark agent ...`, on Linux and Windows). This table and what it imports load
 * nothing of the server: each command imports its code from src/agent when it runs, so the agent never
 * evaluates the database, HTTP or domain modules (main.ts sends `agent` here before run-cli.ts loads them).
 */
import { statSync } from "node:fs";
import { win32 } from "node:path";
import { type ParsedArgs, UsageError } from "./args";
import { type Command, commandLines, resolveCommand } from "./command";

/** Every flag of an agent command, with its value's name ("" for a switch) and one line of what it does. */
const FLAG_HELP = {
  server: [
    "URL",
    "the server's base URL: the address its console is served from (https://bulwark.example.com)",
  ],
  token: [
    "TOKEN",
    "an enrollment token (bwe_...): the console's Enroll device, or POST /api/v1/enrollment-tokens",
  ],
  name: ["NAME", "the device's name on the server (default: ROOT/etc/hostname)"],
  "hardware-id": [
    "ID",
    "this machine's stable id (default: the firmware's product_uuid, else ROOT/etc/machine-id)",
  ],
  "work-dir": ["DIR", "a folder a wipe empties besides the policy's wipe.work_paths (repeatable)"],
  "ca-file": [
    "PEM",
    "the CA certificate(s) that signed the server's TLS certificate, when the system does not trust it",
  ],
  "ca-sha256": [
    "HEX",
    "the SHA-256 of the server's CA, as the console shows it: fetched from the server and trusted only when it matches",
  ],
  "insecure-http": [
    "",
    "enroll over plain http to a server on another machine, knowing that tokens, policies and wipe commands travel unprotected",
  ],
  "no-certificate": ["", "enroll with the device token alone, without a device certificate"],
  force: ["", "enroll again over an enrolled state folder (the server's old device must be retired first)"],
  once: [
    "",
    "run one cycle and exit: 0 when it checked in and enforced every setting, 5 when a setting failed, 1 when it could not check in",
  ],
  "dry-run": [
    "",
    "no check-in: read the server's policy and print what a run would change, changing nothing (implies --once)",
  ],
  "no-tunnel": ["", "write the tunnel's file but never bring the tunnel up or down"],
  json: ["", "print JSON instead of text"],
  "from-capture": [
    "DIR",
    "read the facts from a folder `agent capture` wrote (on any machine) instead of from this machine",
  ],
  root: [
    "DIR",
    "the machine's root folder (default /; on Windows the system drive): every path the agent reads or writes is under it",
  ],
  "state-dir": [
    "DIR",
    "where the agent keeps its identity and state (default /var/lib/bulwark-agent; on Windows %ProgramData%\\Bulwark; on macOS /var/db/bulwark-agent)",
  ],
} as const satisfies Record<string, readonly [value: string, text: string]>;

type AgentFlag = keyof typeof FLAG_HELP;

/** An agent command: its flags are among FLAG_HELP's, so that `--help` has a line for each. */
interface AgentCommand extends Command {
  flags: readonly AgentFlag[];
  switches?: readonly AgentFlag[];
}

/** The flags every agent command takes: where the machine is, and where the agent keeps its state. */
const COMMON_FLAGS = ["root", "state-dir"] as const;

/** ROOT from `--root` (default `/`, on Windows the system drive): a folder, or a usage error. */
function rootOf(args: ParsedArgs): string {
  const root = args.flags.get("root") ?? (isWindows() ? `${process.env.SystemDrive ?? "C:"}\\` : "/");
  let isFolder: boolean | undefined;
  try {
    isFolder = statSync(root, { throwIfNoEntry: false })?.isDirectory();
  } catch (error) {
    throw new UsageError(`--root ${root}: cannot be read (${(error as Error).message})`);
  }
  if (!isFolder) throw new UsageError(`--root ${root}: not a folder`);
  return root;
}

/**
 * The state folder from `--state-dir` (default /var/lib/bulwark-agent; %ProgramData%\Bulwark on Windows;
 * /var/db/bulwark-agent on macOS, as src/agent/macos/settings.ts says why).
 */
function stateDirOf(args: ParsedArgs): string {
  const fallback = isWindows()
    ? win32.join(process.env.ProgramData ?? "C:\\ProgramData", "Bulwark")
    : process.platform === "darwin"
      ? "/var/db/bulwark-agent"
      : "/var/lib/bulwark-agent";
  return args.flags.get("state-dir") ?? fallback;
}

/** Whether the agent runs on Windows (the platform table, src/agent/platform.ts, says what differs). */
function isWindows(): boolean {
  return process.platform === "win32";
}

/**
 * The state folder of a command that reads it (and with `write`, changes it), once this user is known to
 * be able to: otherwise one line naming it ("run as root (sudo)"), exit 2, rather than "not enrolled".
 */
async function usableStateDir(args: ParsedArgs, access: { write: boolean }): Promise<string> {
  const stateDir = stateDirOf(args);
  const { checkStateFolder } = await import("../agent/identity/state-folder");
  checkStateFolder(stateDir, access);
  return stateDir;
}

/** Every agent command, in the order `bulwark help` lists them. */
export const AGENT_COMMANDS: readonly AgentCommand[] = [
  {
    name: "agent enroll",
    usage:
      "agent enroll --server URL --token TOKEN [--name NAME] [--hardware-id ID] [--work-dir DIR]... [--ca-file PEM | --ca-sha256 HEX] [--insecure-http] [--no-certificate] [--force]",
    summary:
      "enroll this machine with an enrollment token: its keys are made here and never sent; prints the\n" +
      "device id. Exit 3: the server refused (its reason is printed); 4: the server could not be reached,\n" +
      "or the URL is not a Bulwark server's. Nothing is written unless the server enrolled it. A plain\n" +
      "http:// server that is not this machine is refused unless --insecure-http; --ca-sha256 pins the\n" +
      "server's CA by the SHA-256 the console shows",
    flags: [...COMMON_FLAGS, "server", "token", "name", "hardware-id", "work-dir", "ca-file", "ca-sha256"],
    switches: ["no-certificate", "force", "insecure-http"],
    positionals: 0,
    needsConfig: false,
    run: async (_config, args) => {
      const server = args.flags.get("server");
      const token = args.flags.get("token");
      if (!server || !token) throw new UsageError("agent enroll needs --server and --token");
      const { enrollCommand } = await import("../agent/enroll-command");
      const { EnrollUsageError } = await import("../agent/identity/enroll");
      try {
        await enrollCommand({
          server,
          token,
          name: args.flags.get("name"),
          hardwareId: args.flags.get("hardware-id"),
          workDirs: args.repeated.get("work-dir") ?? [],
          caFile: args.flags.get("ca-file"),
          caSha256: args.flags.get("ca-sha256"),
          insecureHttp: args.switches.has("insecure-http"),
          withCertificate: !args.switches.has("no-certificate"),
          force: args.switches.has("force"),
          root: rootOf(args),
          stateDir: stateDirOf(args),
        });
      } catch (error) {
        if (error instanceof EnrollUsageError) throw new UsageError(error.message);
        throw error;
      }
    },
  },
  {
    name: "agent run",
    usage: "agent run [--once] [--dry-run] [--no-tunnel] [--root DIR] [--state-dir DIR]",
    summary:
      "check in, enforce the policy, report it; again every next_checkin_seconds (±10%), backing off when\n" +
      "the server is away (the last policy stays enforced). --once: one cycle, exit 1 when it could not\n" +
      "check in (5: a setting failed); --dry-run: no check-in, read the server's policy and print what a run\n" +
      "would change, changing nothing; --no-tunnel:\n" +
      "never bring the tunnel up. Without --once it ends with exit 6 when it finds no enrollment",
    flags: COMMON_FLAGS,
    switches: ["once", "dry-run", "no-tunnel"],
    positionals: 0,
    needsConfig: false,
    run: async (_config, args) => {
      const dryRun = args.switches.has("dry-run");
      const stateDir = await usableStateDir(args, { write: !dryRun });
      const { runCommand } = await import("../agent/run/run-command");
      await runCommand({
        root: rootOf(args),
        stateDir,
        once: args.switches.has("once"),
        dryRun,
        noTunnel: args.switches.has("no-tunnel"),
      });
    },
  },
  {
    name: "agent status",
    usage: "agent status [--json] [--state-dir DIR]",
    summary:
      "from local state alone: this device, its last and next check-in, the last error, its policy,\n" +
      "compliance (and why not) and each setting's enforcement",
    flags: COMMON_FLAGS,
    switches: ["json"],
    positionals: 0,
    needsConfig: false,
    run: async (_config, args) => {
      const stateDir = await usableStateDir(args, { write: false });
      const { statusCommand } = await import("../agent/run/status-command");
      statusCommand({ stateDir, json: args.switches.has("json") });
    },
  },
  {
    name: "agent plan",
    usage: "agent plan [--json] [--root DIR] [--state-dir DIR]",
    summary:
      "each setting of the last policy the server sent: enforced, reported or unsupported (and why) on\n" +
      "this machine, with the file changes it implies; asks no server and changes nothing",
    flags: COMMON_FLAGS,
    switches: ["json"],
    positionals: 0,
    needsConfig: false,
    run: async (_config, args) => {
      const stateDir = await usableStateDir(args, { write: false });
      const { planCommand } = await import("../agent/run/plan-command");
      await planCommand({
        root: rootOf(args),
        stateDir,
        json: args.switches.has("json"),
      });
    },
  },
  {
    name: "agent unenroll",
    usage: "agent unenroll [--root DIR] [--state-dir DIR]",
    summary:
      "bring the tunnel down, undo every change the agent made (the machine ends as before enrollment),\n" +
      "take the device off the server, remove the service install-service installed and forget the\n" +
      "identity; run it again to finish after a failure",
    flags: COMMON_FLAGS,
    positionals: 0,
    needsConfig: false,
    run: async (_config, args) => {
      const stateDir = await usableStateDir(args, { write: true });
      const { unenrollCommand } = await import("../agent/run/unenroll-command");
      await unenrollCommand({ root: rootOf(args), stateDir });
    },
  },
  {
    name: "agent install-service",
    usage: "agent install-service [--root DIR] [--state-dir DIR]",
    summary:
      "copy this executable to /usr/local/bin/bulwark, write the systemd unit starting it\n" +
      "(deploy/bulwark-agent.service) and, on this machine, enable and start it; exit 2 where systemd is not running",
    flags: COMMON_FLAGS,
    positionals: 0,
    needsConfig: false,
    run: async (_config, args) => {
      const { installService } = await import("../agent/install-service");
      await installService({ root: rootOf(args), stateDir: stateDirOf(args) });
    },
  },
  {
    name: "agent facts",
    usage: "agent facts [--root DIR] [--json] [--from-capture DIR] [--state-dir DIR]",
    summary:
      "print what the next check-in would send about this machine (or the tree at --root, or a capture):\n" +
      "each fact, or why it is unknown; --json: the check-in's os_version and facts",
    flags: [...COMMON_FLAGS, "from-capture"],
    switches: ["json"],
    positionals: 0,
    needsConfig: false,
    run: async (_config, args) => {
      const { printFacts } = await import("../agent/facts-command");
      const capture = args.flags.get("from-capture");
      await printFacts({
        root: capture === undefined ? rootOf(args) : "/",
        json: args.switches.has("json"),
        ...(capture === undefined ? {} : { fromCapture: capture }),
      });
    },
  },
  {
    name: "agent capture",
    usage: "agent capture DIR [--root DIR] [--state-dir DIR]",
    summary:
      "write every file and program output the agent reads for its facts into the folder DIR (no keys, no\n" +
      "token), for a support case or a test fixture; `agent facts --from-capture DIR` reads it back",
    flags: COMMON_FLAGS,
    positionals: 1,
    needsConfig: false,
    run: async (_config, args) => {
      const folder = args.positionals[0];
      if (folder === undefined)
        throw new UsageError("agent capture needs the folder to write into: agent capture DIR");
      const { captureFacts } = await import("../agent/capture");
      const collected = await captureFacts(rootOf(args), folder);
      const known = Object.keys(collected.facts).length + (collected.os_version === undefined ? 0 : 1);
      console.error(
        `Captured what the agent reads into ${folder} (${known} of 8 facts known here); send the folder, or read it back with bulwark agent facts --from-capture ${folder}`,
      );
    },
  },
];

/** What `--help` (or -h) asks for, anywhere in an agent command's arguments. */
export function asksForHelp(args: readonly string[]): boolean {
  return args.some((argument) => argument === "--help" || argument === "-h");
}

/**
 * The agent's help for the words after `agent`: none, the list of its commands; a command's name, that
 * command's flags. An unknown name is a usage error that lists them.
 */
export function agentHelp(words: readonly string[]): string {
  if (words.length === 0) return agentCommandsHelp();
  const { command } = resolveCommand(["agent", words[0] as string], AGENT_COMMANDS);
  return agentCommandHelp(command as AgentCommand);
}

/** `bulwark agent --help`: every agent command, its usage and what it does. */
function agentCommandsHelp(): string {
  return [
    "Usage: bulwark agent <command> [flags] (Linux and Windows); bulwark agent <command> --help lists its flags",
    "",
    "Commands:",
    ...commandLines(AGENT_COMMANDS),
  ].join("\n");
}

/** `bulwark agent COMMAND --help`: its usage, what it does, and one line for each of its flags. */
function agentCommandHelp(command: AgentCommand): string {
  const isCommon = (flag: AgentFlag) => (COMMON_FLAGS as readonly AgentFlag[]).includes(flag);
  const all = [...command.flags, ...(command.switches ?? [])];
  const entries = [
    // The command's own flags in the order its usage gives them, then those every command takes.
    ...[...all.filter((flag) => !isCommon(flag)), ...all.filter(isCommon)].map((flag) => {
      const [value, text] = FLAG_HELP[flag];
      return [`--${flag}${value ? ` ${value}` : ""}`, text] as const;
    }),
    ["--help, -h", "print this help"] as const,
  ];
  const width = Math.max(...entries.map(([left]) => left.length)) + 2;
  return [
    `Usage: bulwark ${command.usage}`,
    "",
    command.summary,
    "",
    "Flags:",
    ...entries.map(([left, text]) => `  ${left.padEnd(width)}${text}`),
  ].join("\n");
}
