/**
 * The system's program folders, searched after PATH: a service manager, cron or `sudo` may start the
 * agent with a PATH that lacks /usr/sbin, where wg-quick, usbguard and nft live on some distributions.
 */
const SYSTEM_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/** The full path of `program` on PATH or in the system's program folders, or null when it is in neither. */
export function findProgram(program: string): string | null {
  if (program === "") return null;
  const path = process.env.PATH ? `${process.env.PATH}:${SYSTEM_PATH}` : SYSTEM_PATH;
  return Bun.which(program, { PATH: path });
}
