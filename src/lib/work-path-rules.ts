/**
 * Which paths a wipe may erase (the policy's `wipe.work_paths`): checked by the server when a policy is
 * saved, and again by the agent before it erases anything, so that neither an old policy nor a server
 * that lies can point a wipe at the system.
 */

/** Top-level folders of the system (or of root) that no work path may name or match. */
const SYSTEM_FOLDERS = new Set([
  "bin",
  "boot",
  "dev",
  "etc",
  "lib",
  "lib32",
  "lib64",
  "libx32",
  "proc",
  "root",
  "run",
  "sbin",
  "snap",
  "sys",
  "usr",
  "var",
]);

const GLOB = /[*?[]/;

/**
 * Why `path` cannot be a work path, or undefined when it can: `~/...` (in each user's home) or absolute,
 * in clean components (no empty, `.` or `..`), each a name or a glob of `*`, `?` and closed `[...]`
 * (never `**`). An absolute path has at least two components and a first one that is a plain name and
 * not a system folder (`/etc`, `/usr`, `/var`, `/root`, ...): a glob there could match one. A home path
 * is more than one glob (`~/*` is the whole home).
 */
export function workPathProblem(path: string): string | undefined {
  const isHome = path.startsWith("~/");
  if (!isHome && !path.startsWith("/"))
    return "must start with / (an absolute path) or ~/ (in each user's home)";
  const parts = (isHome ? path.slice(2) : path.slice(1)).split("/");
  if (parts.some((part) => part === "" || part === "." || part === ".."))
    return "must name a folder or file below / or ~/, without empty, . or .. components (and no trailing /)";
  if (parts.some((part) => part.includes("**")))
    return "** is not supported: write one glob per level (~/x/*/y)";
  if (parts.some((part) => part.includes("\\"))) return "must not contain a backslash";
  if (parts.some((part) => /\[[^\]]*$/.test(part))) return "has a [ without its closing ]";
  const first = parts[0] as string;
  if (isHome) {
    if (parts.length === 1 && GLOB.test(first)) return "must not match a whole home (~/*)";
    return undefined;
  }
  if (GLOB.test(first))
    return "must start with a folder named in full (/srv/*/work, not /s*): a pattern there could match the system";
  if (SYSTEM_FOLDERS.has(first)) return `must not be in /${first}: a wipe erases work data, never the system`;
  if (parts.length < 2)
    return `must name a folder inside /${first} (/${first} itself holds more than work data)`;
  return undefined;
}
