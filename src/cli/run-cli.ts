import { ConfigError, loadConfig } from "../config/load-config";
import { DatabaseOpenError } from "../db/client";
import { DatabaseSchemaError } from "../db/migrate";
import { DatabaseInUseError } from "../db/serve-lock";
import { DomainError, ValidationError } from "../domain/errors";
import { ListenError } from "../http/http-server";
import { flushLog } from "../lib/log";
import { SecretBoxError } from "../lib/secret-box";
import { CommandFailure, parseArgs, UsageError } from "./args";
import { COMMANDS } from "./commands";

/** Runs one CLI command; returns the process exit code (serve keeps running and returns 0). */
export async function runCli(argv: string[]): Promise<number> {
  try {
    const [word = "help", ...rest] = argv;
    if (word === "--help" || word === "-h") return runCli(["help"]);
    if (word === "--version") return runCli(["version"]);
    // Commands of two words (admin create, org set-plan, vpn server-config) form groups.
    const group = COMMANDS.filter((candidate) => candidate.name.startsWith(`${word} `));
    const isGroup = group.length > 0;
    const name = isGroup ? `${word} ${rest[0] ?? ""}`.trim() : word;
    const command = COMMANDS.find((candidate) => candidate.name === name);
    if (!command)
      throw new UsageError(
        isGroup
          ? `unknown ${word} command "${rest[0] ?? ""}" (try: ${group.map((candidate) => candidate.name).join(", ")})`
          : `unknown command "${word}" (try: bulwark help)`,
      );
    const args = parseArgs(isGroup ? rest.slice(1) : rest, command.flags);
    if (args.positionals.length > command.positionals)
      throw new UsageError(`unexpected argument "${args.positionals[command.positionals]}"`);
    const config = command.needsConfig ? loadConfig({ file: args.flags.get("config") }) : null;
    await command.run(config, args);
    return 0;
  } catch (error) {
    // The log lines before the failure (a migration applied, say) come before its message.
    flushLog();
    if (error instanceof UsageError) {
      console.error(`bulwark: ${error.message}`);
      return 2;
    }
    // Whatever stops a command (a bad config, a port in use, a database that can't be opened or is
    // served already) is one line naming the cause; an operator reads it, not a stack trace.
    const known = [
      ConfigError,
      CommandFailure,
      DomainError,
      DatabaseOpenError,
      DatabaseInUseError,
      DatabaseSchemaError,
      ListenError,
      SecretBoxError,
    ];
    const message =
      error instanceof Error
        ? known.some((kind) => error instanceof kind)
          ? describeKnown(error)
          : `${error.name}: ${error.message.split("\n")[0]}`
        : String(error);
    // A refusal with several causes (the objects of a database's schema that are not Bulwark's) is one
    // line for each.
    console.error(
      message
        .split("\n")
        .map((line) => `bulwark: ${line}`)
        .join("\n"),
    );
    return 1;
  }
}

/** A typed error's message; for invalid input, the fields it names ("email: must be an email address"). */
function describeKnown(error: Error): string {
  if (error instanceof ValidationError && error.errors.length > 0 && error.details) return error.details;
  const details = error instanceof DomainError ? error.details : undefined;
  return details ? `${error.message}: ${details}` : error.message;
}
