/**
 * The system's program folders, searched after PATH: a service manager, cron or `sudo` may start the
 * agent with a PATH that lacks /usr/sbin, where wg-quick, usbguard and nft live on some distributions.
 */
const SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** PATH, then the system's program folders. */
function searchPath(): string {
  return process.env.PATH ? `${process.env.PATH}:${SYSTEM_PATH}` : SYSTEM_PATH;
}

/**
 * Windows' program folders, the only ones searched there: the agent runs as SYSTEM, so a folder a user
 * can write to (PATH may hold one, and Windows looks in the current folder first) must never supply the
 * `reg` or `wg` it runs.
 */
function windowsProgramFolders(): string {
  const system = process.env.SystemRoot ?? "C:\\Windows";
  const programs = process.env.ProgramFiles ?? "C:\\Program Files";
  return [
    `${system}\\System32`,
    `${system}\\System32\\WindowsPowerShell\\v1.0`,
    `${programs}\\WireGuard`,
  ].join(";");
}

/** The full path of `program` on PATH or in the system's program folders, or null when it is in neither. */
export function findProgram(program: string): string | null {
  if (program === "") return null;
  if (process.platform === "win32") {
    if (/[\\/]/.test(program)) return program;
    return Bun.which(program, { PATH: windowsProgramFolders(), cwd: windowsProgramFolders().split(";")[0] });
  }
  return Bun.which(program, { PATH: searchPath() });
}

/**
 * Starts a program as Bun.spawn does, trying again (three times, 100 ms apart) when Windows could not
 * start it at all: under load, process creation there fails now and then (`EUNKNOWN ... uv_spawn`, seen
 * under Wine with a dozen reg.exe started at once), and a failed start of `reg delete` would fail a wipe.
 * Elsewhere a failed start is thrown at once.
 */
export async function startProgram<Child>(start: () => Child): Promise<Child> {
  for (let attempt = 1; ; attempt++) {
    try {
      return start();
    } catch (error) {
      if (process.platform !== "win32" || attempt >= 3) throw error;
      await Bun.sleep(100);
    }
  }
}

/**
 * The environment of a program the agent runs: its own, with the system's program folders on PATH, so
 * that a script such as wg-quick finds ip, wg and resolvconf as the agent found it.
 */
export function programEnvironment(): Record<string, string | undefined> {
  if (process.platform === "win32") return { ...process.env };
  return { ...process.env, PATH: searchPath() };
}
