/**
 * Runs the Windows executable under Debian's Wine, in a throwaway prefix (a Windows of its own: its
 * registry in system.reg, its C: drive a folder). Debian 12's Wine 8.0 lacks one import Bun's Windows
 * runtime needs, `bcryptprimitives.dll!ProcessPrng` (Wine 8.13 has it): without it the executable exits
 * 53 silently. Each prefix gets a forwarding DLL in its system32, built here with mingw's linker:
 * `ProcessPrng = advapi32.SystemFunction036` (RtlGenRandom, which Wine has).
 *
 * Wine's server keeps the pipes of whatever it started open, so a program's output goes to files. The
 * server stays between the commands of a test (starting it again for each doubled a test's time); a test
 * file ends it with `stopWine` after each test (afterEach), and `removeWinePrefix` at the end.
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";

/** A Wine prefix: where it is, and its C: drive as a folder of this machine. */
export interface WinePrefix {
  path: string;
  driveC: string;
}

/** A program's exit code and output under Wine. */
export interface WineResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** The forwarding bcryptprimitives.dll, linked once per run. */
let forwardingDll: string | null = null;

function bcryptPrimitives(): string {
  if (forwardingDll !== null) return forwardingDll;
  const folder = mkdtempSync(join(tmpdir(), "bulwark-dll-"));
  writeFileSync(
    join(folder, "bcryptprimitives.def"),
    "LIBRARY bcryptprimitives.dll\nEXPORTS\nProcessPrng = advapi32.SystemFunction036\n",
  );
  const dll = join(folder, "bcryptprimitives.dll");
  const linked = Bun.spawnSync(
    ["x86_64-w64-mingw32-ld", "--dll", "-e", "0", "bcryptprimitives.def", "-o", dll],
    { cwd: folder, stderr: "pipe" },
  );
  if (linked.exitCode !== 0)
    throw new Error(`linking bcryptprimitives.dll failed: ${linked.stderr.toString()}`);
  forwardingDll = dll;
  return dll;
}

function wineEnvironment(prefix: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? "/usr/bin:/bin",
    HOME: process.env.HOME ?? tmpdir(),
    WINEPREFIX: prefix,
    WINEDEBUG: "-all",
    // No "install Mono/Gecko?" dialogs: nothing here needs them.
    WINEDLLOVERRIDES: "mscoree=;mshtml=",
    DISPLAY: "",
  };
}

/** Ends every Wine process of the prefix (and its wineserver). */
export function stopWine(prefix: WinePrefix): void {
  Bun.spawnSync(["wineserver", "-k"], {
    env: wineEnvironment(prefix.path),
    stdout: "ignore",
    stderr: "ignore",
  });
}

/**
 * A new prefix that reports itself as Windows 10 (Wine's default is Windows 7, whose registry has no
 * CurrentMajorVersionNumber), with the forwarding DLL in its system32.
 */
export function createWinePrefix(): WinePrefix {
  const path = mkdtempSync(join(tmpdir(), "bulwark-wine-"));
  const env = wineEnvironment(path);
  // Inside the prefix, so that removeWinePrefix takes it with the rest.
  const log = join(path, "boot.log");
  const boot = Bun.spawnSync(
    ["sh", "-c", `wine wineboot -i >"${log}" 2>&1 && wine winecfg -v win10 >>"${log}" 2>&1`],
    {
      env,
    },
  );
  Bun.spawnSync(["wineserver", "-w"], { env, timeout: 60_000 });
  if (boot.exitCode !== 0) throw new Error(`wineboot failed: ${readFileSync(log, "utf8")}`);
  const driveC = join(path, "drive_c");
  const system32 = join(driveC, "windows", "system32");
  mkdirSync(system32, { recursive: true });
  writeFileSync(join(system32, "bcryptprimitives.dll"), readFileSync(bcryptPrimitives()));
  return { path, driveC };
}

/** Removes the prefix (its processes stopped first). */
export function removeWinePrefix(prefix: WinePrefix): void {
  stopWine(prefix);
  rmSync(prefix.path, { recursive: true, force: true });
}

/** `path` of this machine as Wine's programs name it: Z: is `/`. */
export function windowsPathOf(path: string): string {
  return `Z:${resolve(path).replaceAll("/", "\\")}`;
}

/**
 * Runs `argv` (a Windows program: a Linux path to an .exe, or a Windows command such as `reg`) in the
 * prefix and waits for it; the output is read from files once it exited. `cwd` is a folder of this
 * machine (a bare name resolves there first, as on Windows).
 */
export async function runUnderWine(
  prefix: WinePrefix,
  argv: string[],
  options: { cwd?: string; env?: Record<string, string>; timeoutMs?: number } = {},
): Promise<WineResult> {
  const outputs = mkdtempSync(join(tmpdir(), "bulwark-wine-out-"));
  const stdoutFile = join(outputs, "stdout");
  const stderrFile = join(outputs, "stderr");
  try {
    const child = Bun.spawn(["wine", ...argv], {
      cwd: options.cwd ?? outputs,
      env: { ...wineEnvironment(prefix.path), ...options.env },
      stdin: "ignore",
      stdout: Bun.file(stdoutFile),
      stderr: Bun.file(stderrFile),
      timeout: options.timeoutMs ?? 120_000,
      killSignal: "SIGKILL",
    });
    const code = await child.exited;
    return {
      code,
      stdout: readFileSync(stdoutFile, "utf8").replaceAll("\r\n", "\n"),
      stderr: readFileSync(stderrFile, "utf8").replaceAll("\r\n", "\n"),
    };
  } finally {
    rmSync(outputs, { recursive: true, force: true });
  }
}

/** `reg query KEY /v NAME` in the prefix: the value's type and data, or null when there is none. */
export async function queryRegistry(
  prefix: WinePrefix,
  key: string,
  name: string,
): Promise<{ type: string; data: string } | null> {
  const result = await runUnderWine(prefix, ["reg", "query", key, "/v", name]);
  if (result.code !== 0) return null;
  const line = result.stdout.split("\n").find((text) => text.trim().startsWith(`${name} `));
  const match = line?.trim().match(/^(.*?)\s{4}(REG_\w+)\s{4}?(.*)$/);
  return match ? { type: match[2] ?? "", data: (match[3] ?? "").trim() } : null;
}
