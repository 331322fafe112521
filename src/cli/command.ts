import type { Config } from "../config/config-schema";
import { nearestName } from "../lib/nearest-name";
import { type ParsedArgs, parseArgs, UsageError } from "./args";

/** One command: its words, flags, positionals, help line and what it runs. */
export interface Command {
  name: string;
  usage: string;
  summary: string;
  /** Flags that take a value (`--root DIR`). */
  flags: readonly string[];
  /** Flags that take none (`--json`). */
  switches?: readonly string[];
  positionals: number;
  /** Commands that read no configuration get none. */
  needsConfig: boolean;
  run(config: Readonly<Config> | null, args: ParsedArgs): Promise<void> | void;
}

/**
 * The command `argv` names among `commands`, and its parsed arguments. Commands of two words (admin
 * create, org set-plan, agent facts) form groups. Throws `UsageError` for an unknown command, flag or
 * extra argument.
 */
export function resolveCommand(
  argv: string[],
  commands: readonly Command[],
): { command: Command; args: ParsedArgs } {
  const [word = "help", ...rest] = argv;
  const group = commands.filter((candidate) => candidate.name.startsWith(`${word} `));
  const isGroup = group.length > 0;
  const name = isGroup ? `${word} ${rest[0] ?? ""}`.trim() : word;
  const command = commands.find((candidate) => candidate.name === name);
  if (!command) {
    const nearest = nearestName(
      name,
      (isGroup ? group : commands).map((candidate) => candidate.name),
    );
    const hint = nearest
      ? `did you mean ${nearest}?`
      : isGroup
        ? `try: ${group.map((candidate) => candidate.name).join(", ")}`
        : "try: bulwark help";
    throw new UsageError(
      isGroup
        ? `unknown ${word} command "${rest[0] ?? ""}" (${hint})`
        : `unknown command "${word}" (${hint})`,
    );
  }
  const args = parseArgs(isGroup ? rest.slice(1) : rest, command.flags, command.switches);
  if (args.positionals.length > command.positionals)
    throw new UsageError(`unexpected argument "${args.positionals[command.positionals]}"`);
  return { command, args };
}

/** A help listing of `commands`: each one's usage, and what it does below it. */
export function commandLines(commands: readonly Command[]): string[] {
  return commands.flatMap((command) => [
    `  ${command.usage}`,
    ...command.summary.split("\n").map((line) => `      ${line}`),
  ]);
}
