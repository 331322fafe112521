import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { $ } from "bun";

let built: Promise<string> | null = null;

/** Compiles the executable once per test run, into a temporary folder, and returns its path. */
export function buildBinary(): Promise<string> {
  built ??= (async () => {
    const folder = mkdtempSync(join(tmpdir(), "bulwark-bin-"));
    const path = join(folder, "bulwark");
    await $`bun build --compile src/main.ts --outfile ${path}`.cwd(join(import.meta.dir, "../..")).quiet();
    return path;
  })();
  return built;
}

export interface RunningServer {
  url: string;
  output: () => string;
  process: ReturnType<typeof Bun.spawn>;
  /** Stops the process (SIGTERM, or the given signal) and waits for it to exit. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/**
 * Starts `bulwark serve` from `folder` on port 0 and resolves once it prints where it listens.
 * `env` adds BULWARK_* variables.
 */
export async function startServer(
  binary: string,
  folder: string,
  env: Record<string, string> = {},
): Promise<RunningServer> {
  const child = Bun.spawn([binary, "serve"], {
    cwd: folder,
    env: { PATH: process.env.PATH ?? "", HOME: folder, BULWARK_SERVER_PORT: "0", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  let output = "";
  const decoder = new TextDecoder();
  const collect = async (stream: ReadableStream<Uint8Array>) => {
    for await (const chunk of stream) output += decoder.decode(chunk);
  };
  void collect(child.stdout as ReadableStream<Uint8Array>);
  void collect(child.stderr as ReadableStream<Uint8Array>);
  const deadline = Date.now() + 15_000;
  let url: string | undefined;
  while (!url) {
    url = /listening on (http:\/\/\S+)/.exec(output)?.[1];
    if (url) break;
    if (child.exitCode !== null) throw new Error(`bulwark exited early (${child.exitCode}):\n${output}`);
    if (Date.now() > deadline) {
      child.kill();
      throw new Error(`bulwark did not start in time:\n${output}`);
    }
    await Bun.sleep(25);
  }
  return {
    url,
    output: () => output,
    process: child,
    stop: async (signal = "SIGTERM") => {
      if (child.exitCode === null) child.kill(signal);
      return child.exited;
    },
  };
}
