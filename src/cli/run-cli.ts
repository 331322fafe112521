import { SecretKeyMismatch } from "../boot";
import { ConfigError, loadConfig } from "../config/load-config";
import { DatabaseOpenError } from "../db/client";
import { DatabaseSchemaError } from "../db/migrate";
import { PasswordFileError } from "../db/open-store";
import { PgConnectError } from "../db/pg/connect";
import { DatabaseInUseError } from "../db/serve-lock";
import { DomainError, ValidationError } from "../domain/errors";
import { ListenError } from "../http/http-server";
import { flushLog } from "../lib/log";
import { SecretBoxError } from "../lib/secret-box";
import { CommandFailure, UsageError } from "./args";
import { resolveCommand } from "./command";
import { COMMANDS } from "./commands";

/** Runs one CLI command; returns the process exit code (serve keeps running and returns 0). */
export async function runCli(argv: string[]): Promise<number> {
  try {
    const [word = "help"] = argv;
    if (word === "--help" || word === "-h") return runCli(["help"]);
    if (word === "--version") return runCli(["version"]);
    if (word === "agent") return (await import("./run-agent-cli")).runAgentCli(argv);
    const { command, args } = resolveCommand(argv, COMMANDS);
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
      PgConnectError,
      PasswordFileError,
      SecretKeyMismatch,
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
