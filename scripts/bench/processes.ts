/**
 * The benchmark's processes: servers pinned to core 0 and wrk pinned to core 1 (taskset), so the load
 * generator never takes the server's CPU, and wrk's report read into numbers.
 */
import { readFileSync } from "node:fs";
import { $ } from "bun";

export const SERVER_CORE = "0";
export const LOAD_CORE = "1";

/**
 * Moves the benchmark's own process (every thread) to the load core: it polls a starting server for
 * the cold-start measure, and polling from the server's core would take the CPU the start needs.
 */
export function pinToLoadCore(): void {
  Bun.spawnSync(["taskset", "-a", "-p", "-c", LOAD_CORE, String(process.pid)], { stdout: "ignore" });
}

export interface RunningServer {
  url: string;
  pid: number;
  /** Resident and peak memory of the process, in MiB. */
  memory(): { rssMib: number; peakMib: number };
  /** Stops the process (SIGTERM, or the given signal) and waits for it to exit. */
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** Processes started here, killed when the benchmark ends however it ends. */
const children = new Set<ReturnType<typeof Bun.spawn>>();
process.on("exit", () => {
  for (const child of children) if (child.exitCode === null) child.kill("SIGKILL");
});

/**
 * Starts `command` on the server core and waits for its "listening on <url>" line; `onLine` is given
 * each later line of its standard output (its log).
 */
export async function startServer(
  command: string[],
  options: { cwd?: string; env?: Record<string, string>; onLine?: (line: string) => void } = {},
): Promise<RunningServer> {
  const child = Bun.spawn(["taskset", "-c", SERVER_CORE, ...command], {
    cwd: options.cwd,
    env: { PATH: process.env.PATH ?? "", ...options.env },
    stdout: "pipe",
    stderr: "inherit",
  });
  children.add(child);
  const reader = (child.stdout as ReadableStream<Uint8Array>).getReader();
  let output = "";
  let url: string | undefined;
  while (!url) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${command.join(" ")} exited before listening:\n${output}`);
    output += new TextDecoder().decode(value);
    url = /listening on (http:\/\/[^\s"]+)/.exec(output)?.[1];
  }
  // The server writes a log line per request: keep reading, as journald or docker would, so that what is
  // measured includes writing the log and a full pipe never holds the server back.
  void (async () => {
    const decoder = new TextDecoder();
    let partial = output.slice(output.lastIndexOf("\n") + 1);
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      if (!options.onLine) continue;
      partial += decoder.decode(value, { stream: true });
      const lines = partial.split("\n");
      partial = lines.pop() ?? "";
      for (const line of lines) options.onLine(line);
    }
  })();
  return {
    url,
    pid: child.pid,
    memory: () => processMemory(child.pid),
    stop: async (signal = "SIGTERM") => {
      child.kill(signal);
      await child.exited;
    },
  };
}

/** A JSON request that must succeed (below 300): its status and answer; anything else throws with the answer. */
export async function call(
  server: { url: string },
  method: string,
  path: string,
  body?: unknown,
  token?: string,
) {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const answer = (await response.json()) as any;
  if (response.status >= 300)
    throw new Error(`${method} ${path}: ${response.status} ${JSON.stringify(answer)}`);
  return { status: response.status, body: answer };
}

export function processMemory(pid: number): { rssMib: number; peakMib: number } {
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rssMib: Math.round(kib("VmRSS") / 1024), peakMib: Math.round(kib("VmHWM") / 1024) };
}

export interface WrkResult {
  rps: number;
  p50Ms: number;
  p99Ms: number;
  maxMs: number;
  non2xx: number;
  errors: number;
}

/** wrk's durations ("812.00us", "1.23ms", "2.01s", "1.00m") in milliseconds. */
function milliseconds(text: string | undefined): number {
  const match = /^([\d.]+)(us|ms|s|m)$/.exec(text ?? "");
  if (!match) return Number.NaN;
  const factor = { us: 0.001, ms: 1, s: 1000, m: 60_000 }[match[2] as "us" | "ms" | "s" | "m"];
  return Number(match[1]) * factor;
}

/**
 * One wrk run from the load core, with one thread. A reply may take up to 30 s (wrk's default, 2 s,
 * would count a slower one as a socket error and leave it out of the latencies).
 */
export async function wrk(
  url: string,
  options: { connections: number; seconds: number; script?: string; headers?: string[] },
): Promise<WrkResult> {
  const headerArgs = (options.headers ?? []).flatMap((header) => ["-H", header]);
  const scriptArgs = options.script ? ["-s", options.script] : [];
  const result =
    await $`taskset -c ${LOAD_CORE} wrk -t1 -c${options.connections} -d${options.seconds}s --timeout 30s --latency ${scriptArgs} ${headerArgs} ${url}`
      .quiet()
      .text();
  const socketErrors = /Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)/.exec(result);
  return {
    rps: Number(/Requests\/sec:\s+([\d.]+)/.exec(result)?.[1] ?? Number.NaN),
    p50Ms: milliseconds(/^\s+50%\s+(\S+)/m.exec(result)?.[1]),
    p99Ms: milliseconds(/^\s+99%\s+(\S+)/m.exec(result)?.[1]),
    maxMs: milliseconds(/^\s+Latency\s+\S+\s+\S+\s+(\S+)/m.exec(result)?.[1]),
    non2xx: Number(/Non-2xx or 3xx responses: (\d+)/.exec(result)?.[1] ?? 0),
    errors: socketErrors ? socketErrors.slice(1).reduce((sum, value) => sum + Number(value), 0) : 0,
  };
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const middle = Math.floor(sorted.length / 2);
  return sorted.length % 2
    ? (sorted[middle] as number)
    : ((sorted[middle - 1] as number) + (sorted[middle] as number)) / 2;
}

/** Runs `a` and `b` alternately `rounds` times and keeps each one's median of `pick`. */
export async function alternate(
  rounds: number,
  a: () => Promise<WrkResult>,
  b: () => Promise<WrkResult>,
  c?: () => Promise<WrkResult>,
): Promise<{ a: WrkResult; b: WrkResult; c: WrkResult | null }> {
  const runsA: WrkResult[] = [];
  const runsB: WrkResult[] = [];
  const runsC: WrkResult[] = [];
  for (let round = 0; round < rounds; round++) {
    runsA.push(await a());
    runsB.push(await b());
    if (c) runsC.push(await c());
  }
  return { a: medianResult(runsA), b: medianResult(runsB), c: c ? medianResult(runsC) : null };
}

/** The median of each field over several runs. */
export function medianResult(runs: WrkResult[]): WrkResult {
  const field = (name: keyof WrkResult) => median(runs.map((run) => run[name]));
  return {
    rps: field("rps"),
    p50Ms: field("p50Ms"),
    p99Ms: field("p99Ms"),
    maxMs: Math.max(...runs.map((run) => run.maxMs)),
    non2xx: runs.reduce((sum, run) => sum + run.non2xx, 0),
    errors: runs.reduce((sum, run) => sum + run.errors, 0),
  };
}
