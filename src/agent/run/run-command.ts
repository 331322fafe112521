import { AgentExit } from "../enroll-command";
import { runCycle } from "./cycle";

export interface RunCommandOptions {
  root: string;
  stateDir: string;
  once: boolean;
  dryRun: boolean;
  noTunnel: boolean;
}

/**
 * `bulwark agent run`: cycles until SIGTERM or SIGINT (the service), logging a line when something
 * changes; `--once` (and `--dry-run`, which implies it): one cycle, exit 0 when it checked in, else 1
 * with the reason (the state is kept).
 */
export async function runCommand(options: RunCommandOptions): Promise<void> {
  const cycle = () =>
    runCycle({
      root: options.root,
      stateDir: options.stateDir,
      dryRun: options.dryRun,
      noTunnel: options.noTunnel,
    });
  if (options.once || options.dryRun) {
    const result = await cycle();
    console.error(result.message);
    if (!result.isCheckedIn) throw new AgentExit(result.message, 1);
    return;
  }
  let isStopping = false;
  let wake: () => void = () => {};
  const stop = () => {
    isStopping = true;
    wake();
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  let lastMessage = "";
  while (!isStopping) {
    let delaySeconds: number;
    try {
      const result = await cycle();
      // A state is said once, not once per cycle.
      if (result.message !== lastMessage) console.error(`${new Date().toISOString()} ${result.message}`);
      lastMessage = result.message;
      delaySeconds = result.delaySeconds;
    } catch (error) {
      console.error(`${new Date().toISOString()} ${(error as Error).message}`);
      delaySeconds = 60;
    }
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, delaySeconds * 1000);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
}
