import { closeSync, openSync, readFileSync, unlinkSync, writeSync } from "node:fs";
import { join } from "node:path";

/** How long a command waits for another agent process to finish its work on the state folder. */
const LOCK_WAIT_MS = 120_000;

/** Another agent process held the state folder for longer than we would wait. */
export class StateLockedError extends Error {
  readonly exitCode = 1;
}

/**
 * Runs `work` while holding STATE/lock, so that two agent processes never change the machine at once:
 * a service cycle that starts while `unenroll` restores the machine would enforce the policy again and
 * leave files that no journal remembers. The lock is a file made with O_EXCL holding the holder's pid;
 * one whose process is gone (killed mid-cycle) is taken over. A held lock is waited for, up to two
 * minutes (a cycle takes milliseconds; a wipe may take longer).
 */
export async function withStateLock<T>(stateDir: string, work: () => Promise<T>): Promise<T> {
  const path = join(stateDir, "lock");
  const deadline = Date.now() + LOCK_WAIT_MS;
  for (;;) {
    try {
      const descriptor = openSync(path, "wx", 0o600);
      writeSync(descriptor, `${process.pid}\n`);
      closeSync(descriptor);
      break;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // No state folder: nothing is enrolled, nothing to guard (the command says so).
      if (code === "ENOENT") return work();
      if (code !== "EEXIST") throw error;
    }
    const holder = holderOf(path);
    if (holder === null || !isRunning(holder)) {
      // Gone (or never written): take it over. Another waiter may do the same; O_EXCL decides.
      try {
        unlinkSync(path);
      } catch {}
      continue;
    }
    if (Date.now() > deadline)
      throw new StateLockedError(
        `another bulwark agent (pid ${holder}) has been working on ${stateDir} for over two minutes: try again when it is done`,
      );
    await Bun.sleep(100);
  }
  try {
    return await work();
  } finally {
    // unenroll empties the folder, the lock with it.
    try {
      if (holderOf(path) === process.pid) unlinkSync(path);
    } catch {}
  }
}

function holderOf(path: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(path, "utf8"), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function isRunning(pid: number): boolean {
  if (pid === process.pid) return true;
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}
