import { AgentExit } from "../enroll-command";
import { withStateLock } from "../identity/state-lock";
import { NotEnrolledError, runCycle } from "./cycle";

/**
 * How many times more reluctant than usual the JIT is in the service's loop (Bun.unsafe.setJITPolicy):
 * enough that a cycle's code stays in the interpreter. A cycle every few minutes never pays back
 * compiling it, and compiled code kept the process growing (`npm run bench:agent`, README).
 */
const LOOP_JIT_POLICY = 1_000_000;

export interface RunCommandOptions {
  root: string;
  stateDir: string;
  once: boolean;
  dryRun: boolean;
  noTunnel: boolean;
}

/** `run --once` checked in, but a setting could not be enforced (its line names each). */
export const SETTING_FAILED_EXIT = 5;

/**
 * The service's loop found no enrollment: it ends, and the unit's `RestartPreventExitStatus=6` keeps
 * systemd from starting it again every few seconds (6 is the LSB's "program is not configured").
 */
export const NOT_ENROLLED_EXIT = 6;

/**
 * `bulwark agent run`: cycles until SIGTERM or SIGINT (the service), logging a line when something
 * changes, and ends with exit 0 once a pending unenroll has told the server and removed the service, or
 * exit 6 when it finds no enrollment; `--once` (and `--dry-run`, which implies
 * it): one cycle, exit 0 when it checked in and every setting was enforced, 5 when it checked in but a
 * setting failed, 1 when it could not check in (the state is kept). The line of a nonzero exit is
 * printed once, by the CLI.
 */
export async function runCommand(options: RunCommandOptions): Promise<void> {
  const runOne = () =>
    runCycle({
      root: options.root,
      stateDir: options.stateDir,
      dryRun: options.dryRun,
      noTunnel: options.noTunnel,
    });
  // A dry run changes nothing; any other cycle holds the state folder against a concurrent unenroll.
  const cycle = () => (options.dryRun ? runOne() : withStateLock(options.stateDir, runOne));
  if (options.once || options.dryRun) {
    const result = await cycle();
    if (!result.isCheckedIn) throw new AgentExit(result.message, 1);
    if ((result.failedSettings ?? 0) > 0) throw new AgentExit(result.message, SETTING_FAILED_EXIT);
    console.error(result.message);
    return;
  }
  Bun.unsafe.setJITPolicy(LOOP_JIT_POLICY);
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
      // Unenrolled and gone: exit 0, which the service manager does not restart (launchd's KeepAlive
      // SuccessfulExit false; the unit is removed already).
      if (result.hasLeft) return;
      delaySeconds = result.delaySeconds;
    } catch (error) {
      if (error instanceof NotEnrolledError)
        throw new AgentExit(
          `${options.stateDir} holds no enrollment: the service stops (after bulwark agent enroll, systemctl restart bulwark-agent)`,
          NOT_ENROLLED_EXIT,
        );
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
