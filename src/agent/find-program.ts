/**
 * The system's program folders, searched after PATH: a service manager, cron or `sudo` may start the
 * agent with a PATH that lacks /usr/sbin, where wg-quick, usbguard and nft live on some distributions.
 */
const SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** PATH, then the system's program folders. */
function searchPath(): string {
  return process.env.PATH ? `${process.env.PATH}:${SYSTEM_PATH}` : SYSTEM_PATH;
}

/** The full path of `program` on PATH or in the system's program folders, or null when it is in neither. */
export function findProgram(program: string): string | null {
  if (program === "") return null;
  return Bun.which(program, { PATH: searchPath() });
}

/**
 * The environment of a program the agent runs: its own, with the system's program folders on PATH, so
 * that a script such as wg-quick finds ip, wg and resolvconf as the agent found it.
 */
export function programEnvironment(): Record<string, string | undefined> {
  return { ...process.env, PATH: searchPath() };
}
