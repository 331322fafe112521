import { afterAll, beforeAll, expect } from "bun:test";
import { existsSync, mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { buildExecutable } from "../../scripts/build-executable";
import { noteServerLog } from "./server-errors";

let built: Promise<string> | null = null;

/**
 * The executable under test: TEST_EXECUTABLE when set (`npm test` sets it to the dist/bulwark it just
 * built), else one built once per run by the same function as `npm run build`, with the same flags.
 */
export function executablePath(): Promise<string> {
  built ??= process.env.TEST_EXECUTABLE
    ? Promise.resolve(process.env.TEST_EXECUTABLE)
    : buildExecutable(join(mkdtempSync(join(tmpdir(), "bulwark-bin-")), "bulwark"));
  return built;
}

export const buildBinary = executablePath;

let windowsBuilt: Promise<string> | null = null;

/**
 * The Windows executable under test: TEST_WINDOWS_EXECUTABLE when set, else the
 * bulwark-windows-x64.exe beside the executable under test when it is not older than it (both made by
 * one `npm run build`), else one built once per run by the same function, for the same target.
 */
export function windowsExecutablePath(): Promise<string> {
  windowsBuilt ??= (async () => {
    if (process.env.TEST_WINDOWS_EXECUTABLE) return process.env.TEST_WINDOWS_EXECUTABLE;
    const linux = await executablePath();
    const beside = join(dirname(linux), "bulwark-windows-x64.exe");
    if (existsSync(beside) && statSync(beside).mtimeMs >= statSync(linux).mtimeMs) return beside;
    const folder = mkdtempSync(join(tmpdir(), "bulwark-windows-"));
    return buildExecutable(join(folder, "bulwark-windows-x64.exe"), { target: "windows-x64" });
  })();
  return windowsBuilt;
}

/**
 * For a test file whose servers run one after another on one data folder (killed, then restarted):
 * builds the executable before its tests, and kills every server it started and removes the folder
 * after them. `start` starts the next server there.
 */
export function serversOnOneFolder(prefix: string, env: Record<string, string>) {
  let binary = "";
  const folder = mkdtempSync(join(tmpdir(), prefix));
  const servers: RunningServer[] = [];
  beforeAll(async () => {
    binary = await buildBinary();
  }, 120_000);
  afterAll(async () => {
    for (const server of servers) await server.stop("SIGKILL");
    rmSync(folder, { recursive: true, force: true });
  });
  return {
    folder,
    /** The executable, once the file's tests have started. */
    binary: () => binary,
    start: async (): Promise<RunningServer> => {
      const server = await startServer(binary, folder, env);
      servers.push(server);
      return server;
    },
  };
}

export interface RunningServer {
  url: string;
  /** The CA (PEM) that signed the server's TLS certificate, for an https server. */
  ca?: string;
  output: () => string;
  process: ReturnType<typeof Bun.spawn>;
  /** Stops the process (SIGTERM, or the given signal) and waits for it to exit. */
  stop(signal?: NodeJS.Signals): Promise<number | null>;
}

/** Servers started by this test process, stopped when it exits however a test ended. */
const running = new Set<ReturnType<typeof Bun.spawn>>();
process.on("exit", () => {
  for (const child of running) if (child.exitCode === null) child.kill("SIGKILL");
});

/**
 * Starts `bulwark serve` from `folder` on port 0 and resolves once it prints where it listens.
 * `env` adds BULWARK_* variables.
 */
export async function startServer(
  binary: string,
  folder: string,
  env: Record<string, string> = {},
  options: { ca?: string } = {},
): Promise<RunningServer> {
  const child = Bun.spawn([binary, "serve"], {
    cwd: folder,
    env: { PATH: process.env.PATH ?? "", HOME: folder, BULWARK_SERVER_PORT: "0", ...env },
    stdout: "pipe",
    stderr: "pipe",
  });
  running.add(child);
  void child.exited.then(() => running.delete(child));
  let output = "";
  // Each stream is read line by line: the executable writes its log a turn at a time, and one write
  // can reach this side in several chunks, or between two chunks of the other stream.
  const collect = async (stream: ReadableStream<Uint8Array>) => {
    const decoder = new TextDecoder();
    let partial = "";
    const take = (text: string) => {
      output += text;
      // A 5xx or unhandled error the executable logs fails the test that is running.
      noteServerLog(text);
    };
    for await (const chunk of stream) {
      partial += decoder.decode(chunk, { stream: true });
      const end = partial.lastIndexOf("\n") + 1;
      if (end > 0) {
        take(partial.slice(0, end));
        partial = partial.slice(end);
      }
    }
    partial += decoder.decode();
    if (partial !== "") take(partial);
  };
  const collected = Promise.all([
    collect(child.stdout as ReadableStream<Uint8Array>),
    collect(child.stderr as ReadableStream<Uint8Array>),
  ]);
  const deadline = Date.now() + 15_000;
  let url: string | undefined;
  while (!url) {
    url = /listening on (https?:\/\/[^\s"]+)/.exec(output)?.[1];
    if (url) break;
    if (child.exitCode !== null) {
      // Its last lines (often the cause) may still be on their way.
      await collected;
      throw new Error(`bulwark exited early (${child.exitCode}):\n${output}`);
    }
    if (Date.now() > deadline) {
      child.kill();
      throw new Error(`bulwark did not start in time:\n${output}`);
    }
    await Bun.sleep(25);
  }
  return {
    url,
    ca: options.ca,
    output: () => output,
    process: child,
    stop: async (signal = "SIGTERM") => {
      if (child.exitCode === null) child.kill(signal);
      const code = await child.exited;
      // Whatever it wrote last (and a line on one stream behind a line on the other) is in output().
      // (Bounded: a pipe some child of it still holds open must not hang the test.)
      await Promise.race([collected, Bun.sleep(2_000)]);
      return code;
    },
  };
}

/**
 * A server for the agent's tests, in a folder of its own: `admin` as its first admin (hashed cheaply),
 * a VPN endpoint set, `env` on top; resolves once that admin is signed in.
 */
export async function startAgentServer(
  binary: string,
  prefix: string,
  admin: { email: string; password: string },
  env: Record<string, string> = {},
): Promise<{ server: RunningServer; adminToken: string }> {
  const server = await startServer(binary, mkdtempSync(join(tmpdir(), prefix)), {
    BULWARK_ADMIN_EMAIL: admin.email,
    BULWARK_ADMIN_PASSWORD: admin.password,
    BULWARK_AUTH_PASSWORD_HASH_MEMORY_KIB: "64",
    BULWARK_AUTH_PASSWORD_HASH_ITERATIONS: "1",
    BULWARK_VPN_ENDPOINT: "vpn.bulwark-test.net:51820",
    ...env,
  });
  const { token } = await callServer<{ token: string }>(
    server,
    "POST",
    "/api/v1/auth/login",
    undefined,
    admin,
  );
  return { server, adminToken: token };
}

/** A JSON request to a running server that must succeed (2xx); anything else throws with the answer. */
export async function callServer<T = any>(
  server: RunningServer,
  method: string,
  path: string,
  token?: string,
  body?: unknown,
): Promise<T> {
  const response = await fetch(`${server.url}${path}`, {
    method,
    headers: {
      "content-type": "application/json",
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    ...(server.ca ? { tls: { ca: server.ca } } : {}),
  });
  const text = await response.text();
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status} ${text}`);
  return (text ? JSON.parse(text) : null) as T;
}

/** Runs one command of the executable to its end from `cwd`, with only PATH, HOME and `env` set. */
export function runCommand(binary: string, args: string[], cwd: string, env: Record<string, string> = {}) {
  const result = Bun.spawnSync([binary, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? "", HOME: cwd, ...env },
  });
  return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
}

/** runCommand that lets this process's event loop run meanwhile (a server of the test's own answers). */
export async function runCommandAsync(binary: string, args: string[], cwd: string) {
  const child = Bun.spawn([binary, ...args], {
    cwd,
    env: { PATH: process.env.PATH ?? "", HOME: cwd },
    stdout: "pipe",
    stderr: "pipe",
  });
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ]);
  return { code, stdout, stderr };
}

/** stderr is exactly one line, `bulwark: ...` containing `expected`, with no stack trace. */
export function expectOneLine(stderr: string, expected: string) {
  const lines = stderr.trim().split("\n");
  expect(lines, stderr).toHaveLength(1);
  expect(lines[0]).toStartWith("bulwark: ");
  expect(lines[0]).toContain(expected);
}
