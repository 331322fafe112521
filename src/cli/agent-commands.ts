/**
 * The device agent's commands (`bulwark agent ...`, Linux only). This table and what it imports load
 * nothing of the server: each command imports its code from src/agent when it runs, so the agent never
 * evaluates the database, HTTP or domain modules (main.ts sends `agent` here before run-cli.ts loads them).
 */
import { statSync } from "node:fs";
import { type ParsedArgs, UsageError } from "./args";
import type { Command } from "./command";

/** The flags every agent command takes: where the machine is, and where the agent keeps its state. */
const COMMON_FLAGS = ["root", "state-dir"] as const;

/** ROOT from `--root` (default `/`): a folder, or a usage error. */
function rootOf(args: ParsedArgs): string {
  const root = args.flags.get("root") ?? "/";
  if (!statSync(root, { throwIfNoEntry: false })?.isDirectory())
    throw new UsageError(`--root ${root}: not a folder`);
  return root;
}

/** Every agent command, in the order `bulwark help` lists them. */
export const AGENT_COMMANDS: readonly Command[] = [
  {
    name: "agent facts",
    usage: "agent facts [--root DIR] [--json] [--state-dir DIR]",
    summary:
      "print what the next check-in would send about this machine (or the tree at --root): each fact, or\n" +
      "why it is unknown; --json: the check-in's os_version and facts",
    flags: COMMON_FLAGS,
    switches: ["json"],
    positionals: 0,
    needsConfig: false,
    run: async (_config, args) => {
      const { printFacts } = await import("../agent/facts-command");
      await printFacts({ root: rootOf(args), json: args.switches.has("json") });
    },
  },
];
