import { nearestName } from "../lib/nearest-name";

/** Raised for a command line we cannot run; printed as one line, exit code 2. */
export class UsageError extends Error {}

/** A command that was well formed but could not be carried out; one line per cause, exit code 1. */
export class CommandFailure extends Error {}

export interface ParsedArgs {
  positionals: string[];
  flags: Map<string, string>;
  /** Every value of each flag given, in order (a flag that may repeat: `--work-dir A --work-dir B`). */
  repeated: Map<string, string[]>;
  /** The flags without a value that were given (`--json`). */
  switches: Set<string>;
}

/**
 * Parses `--name value` and `--name=value` flags; only the names in `allowed` are accepted, and each
 * needs a value; the names in `switches` are accepted without one.
 */
export function parseArgs(
  argv: string[],
  allowed: readonly string[],
  switches: readonly string[] = [],
): ParsedArgs {
  const positionals: string[] = [];
  const flags = new Map<string, string>();
  const repeated = new Map<string, string[]>();
  const given = new Set<string>();
  for (let index = 0; index < argv.length; index++) {
    const argument = argv[index] as string;
    if (!argument.startsWith("--")) {
      positionals.push(argument);
      continue;
    }
    const [name, inlineValue] = argument.slice(2).split(/=(.*)/s, 2) as [string, string | undefined];
    if (switches.includes(name)) {
      if (inlineValue !== undefined) throw new UsageError(`flag --${name} takes no value`);
      given.add(name);
      continue;
    }
    if (!allowed.includes(name)) {
      const nearest = nearestName(name, [...allowed, ...switches]);
      throw new UsageError(`unknown flag --${name}${nearest ? ` (did you mean --${nearest}?)` : ""}`);
    }
    const value = inlineValue ?? argv[++index];
    if (value === undefined || (inlineValue === undefined && value.startsWith("--")))
      throw new UsageError(`flag --${name} needs a value`);
    flags.set(name, value);
    repeated.set(name, [...(repeated.get(name) ?? []), value]);
  }
  return { positionals, flags, repeated, switches: given };
}
