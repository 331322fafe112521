import { findProgram, programEnvironment, startProgram } from "../find-program";
/** What one collector found: the value when it could be determined, and why (or why not) in words. */
export interface FactReading<T> {
  /** Left out when it cannot be determined: the agent never guesses. */
  value?: T;
  /** How the value was read, or why there is none ("/ is overlay, not a block device"). */
  detail: string;
}

/** A reading with a value. */
export function known<T>(value: T, detail: string): FactReading<T> {
  return { value, detail };
}

/** A reading without a value. */
export function unknown<T>(detail: string): FactReading<T> {
  return { detail };
}

/** How long one collector may take; after it, its fact is left out and says so. */
export const COLLECTOR_TIME_LIMIT_MS = 2_000;

/** A program's exit code and output, as run by `runProgram`. */
export interface ProgramResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs a program of the live machine (`wg`, `nft`, `systemctl`); tests pass their own. */
export type ProgramRunner = (argv: string[]) => Promise<ProgramResult>;

/** Runs `argv` without a shell and with no input; a program that is not installed exits with code 127. */
export const runProgram: ProgramRunner = async (argv) => {
  const found = findProgram(argv[0] ?? "");
  if (found === null) return { code: 127, stdout: "", stderr: `${argv[0]}: not installed` };
  // Killed with its collector's time limit, so that a hung program does not outlive the command.
  const child = await startProgram(() =>
    Bun.spawn([found, ...argv.slice(1)], {
      env: programEnvironment(),
      stdin: "ignore",
      stdout: "pipe",
      stderr: "pipe",
      // PowerShell takes a second or two to start: Windows' readers have a longer limit (windows/collect.ts).
      timeout: process.platform === "win32" ? 10_000 : COLLECTOR_TIME_LIMIT_MS,
      killSignal: "SIGKILL",
    }),
  );
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  return { code, stdout, stderr };
};

/** The first line of a program's complaint, for a reading's detail. */
export function firstLine(text: string): string {
  return text.trim().split("\n")[0]?.trim() ?? "";
}
