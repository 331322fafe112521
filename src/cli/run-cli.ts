import { ConfigError, loadConfig } from "../config/load-config";
import { DatabaseOpenError } from "../db/client";
import { DatabaseInUseError } from "../db/serve-lock";
import { DomainError } from "../domain/errors";
import { ListenError } from "../http/http-server";
import { VERSION } from "../version";
import { adminCreateCommand } from "./admin-create";
import { parseArgs, UsageError } from "./args";
import { backupCommand } from "./backup";
import { HELP_TEXT } from "./help";
import { migrateCommand } from "./migrate";
import { serveCommand } from "./serve";

const FLAGS_BY_COMMAND: Record<string, readonly string[]> = {
  serve: ["config"],
  migrate: ["config"],
  "admin create": ["config", "email", "password", "name", "org"],
  backup: ["config"],
  version: [],
  help: [],
};

/** Runs one CLI command; returns the process exit code (serve keeps running and returns 0). */
export async function runCli(argv: string[]): Promise<number> {
  try {
    const [command = "help", ...rest] = argv;
    if (command === "--help" || command === "-h") return runCli(["help"]);
    if (command === "--version") return runCli(["version"]);
    const name = command === "admin" ? `admin ${rest[0] ?? ""}`.trim() : command;
    const allowed = FLAGS_BY_COMMAND[name];
    if (!allowed)
      throw new UsageError(
        command === "admin"
          ? `unknown admin command "${rest[0] ?? ""}" (try: admin create)`
          : `unknown command "${command}" (try: bulwark help)`,
      );
    const args = parseArgs(command === "admin" ? rest.slice(1) : rest, allowed);
    const expectedPositionals = name === "backup" ? 1 : 0;
    if (args.positionals.length > expectedPositionals)
      throw new UsageError(`unexpected argument "${args.positionals[expectedPositionals]}"`);
    if (name === "help") {
      console.log(HELP_TEXT);
      return 0;
    }
    if (name === "version") {
      console.log(`bulwark ${VERSION}`);
      return 0;
    }
    const config = loadConfig({ file: args.flags.get("config") });
    switch (name) {
      case "serve":
        await serveCommand(config);
        return 0;
      case "migrate":
        migrateCommand(config);
        return 0;
      case "admin create":
        await adminCreateCommand(config, args);
        return 0;
      case "backup":
        backupCommand(config, args.positionals[0]);
        return 0;
    }
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`bulwark: ${error.message}`);
      return 2;
    }
    // Whatever stops a command (a bad config, a port in use, a database that can't be opened or is
    // served already) is one line naming the cause; an operator reads it, not a stack trace.
    const known = [ConfigError, DomainError, DatabaseOpenError, DatabaseInUseError, ListenError];
    const message =
      error instanceof Error
        ? known.some((kind) => error instanceof kind)
          ? error.message
          : `${error.name}: ${error.message.split("\n")[0]}`
        : String(error);
    console.error(`bulwark: ${message}`);
    return 1;
  }
}
