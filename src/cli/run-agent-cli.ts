import { AGENT_COMMANDS, agentHelp, asksForHelp } from "./agent-commands";
import { UsageError } from "./args";
import { resolveCommand } from "./command";

/**
 * Runs one `bulwark agent ...` command; returns the process exit code. It loads only the agent's code:
 * none of the server's modules (database, HTTP, domain), which run-cli.ts imports.
 */
export async function runAgentCli(
  argv: string[],
  platform: NodeJS.Platform = process.platform,
): Promise<number> {
  try {
    const [word, ...rest] = argv.slice(1);
    if (word === undefined) {
      console.error(`bulwark: agent needs a command\n${agentHelp([])}`);
      return 2;
    }
    // Help is printed on any platform: `agent --help`, `agent help [COMMAND]`, `agent COMMAND --help`.
    if (word === "help" || asksForHelp([word])) {
      console.log(agentHelp(rest.slice(0, 1)));
      return 0;
    }
    if (asksForHelp(rest)) {
      console.log(agentHelp([word]));
      return 0;
    }
    if (platform !== "linux" && platform !== "win32" && platform !== "darwin")
      throw new UsageError(`the agent runs on Linux, Windows and macOS only (this is ${platform})`);
    const { command, args } = resolveCommand(argv, AGENT_COMMANDS);
    await command.run(null, args);
    return 0;
  } catch (error) {
    if (error instanceof UsageError) {
      console.error(`bulwark: ${error.message}`);
      return 2;
    }
    // A command's own ending with its own code (enroll: 3 refused, 4 unreachable).
    const exitCode = (error as { exitCode?: unknown }).exitCode;
    if (typeof exitCode === "number") {
      console.error(`bulwark: ${(error as Error).message}`);
      return exitCode;
    }
    const message = error instanceof Error ? `${error.name}: ${error.message.split("\n")[0]}` : String(error);
    console.error(`bulwark: ${message}`);
    return 1;
  }
}
