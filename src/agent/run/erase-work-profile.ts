/**
 * Erases the work profile without ever following a symbolic link, so that a user who owns a work folder
 * cannot turn a wipe (run as root) against files they could not delete themselves.
 *
 * The walk holds a descriptor for each folder and names every entry relative to it, through the kernel's
 * `/proc/self/fd/N/NAME`: the kernel resolves `/proc/self/fd/N` to the folder that descriptor has open,
 * whatever has been renamed since, so `lstat`, `unlink`, `rmdir` and `open` on that path act as `fstatat`,
 * `unlinkat` and `openat` on the descriptor. A folder is entered only by opening it with
 * `O_NOFOLLOW | O_DIRECTORY` from its parent's descriptor, so an entry swapped for a link between the look
 * and the open (`renameat2(RENAME_EXCHANGE)` racing the walk) makes the open fail instead of leading
 * elsewhere; `unlink` and `rmdir` never follow a final link either. Entries on another mount (another
 * device number, or a mount point of the same file system, such as a bind mount) are left alone.
 *
 * `/proc` and the mounts are the running kernel's, not ROOT's: the files erased are real ones.
 */
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmdirSync,
  unlinkSync,
} from "node:fs";
import { join, posix } from "node:path";
import { workPathProblem } from "../../lib/work-path-rules";

/** What one work path came to: emptied (or deleted, for a file), absent, or not erased and why. */
export interface ErasedPath {
  /** The work path as the policy or enrollment named it (`~/Work`), or as matched (`/home/ann/Work`). */
  path: string;
  outcome: "erased" | "absent" | "not_followed" | "failed";
  files: number;
  bytes: number;
  folders: number;
  /** Why it was not followed or failed, and entries left because they are on another mount. */
  detail?: string;
}

/** The whole erasure: each path's outcome and the totals. */
export interface ErasureReport {
  paths: ErasedPath[];
  files: number;
  bytes: number;
  /** Entries that could not be removed (each `path: error`); a wipe with any is not complete. */
  failures: string[];
}

/** Where a work path starts from, and the components below it that are walked without following links. */
export interface WorkTarget {
  /** How the report names it. */
  label: string;
  /** A folder trusted as it is (ROOT, a user's home from ROOT/etc/passwd, `/`): opened following links. */
  anchor: string;
  /** The anchor as the machine names it (`/home/ann` for ROOT/home/ann), the start of each reported path. */
  anchorLabel: string;
  /** The components below the anchor, each a name or a glob (`*`, `?`, `[...]`); none are followed. */
  parts: string[];
  /** Why the agent refuses this path (a system folder, a pattern at the top): nothing is erased for it. */
  refused?: string;
}

const OPEN_FOLDER = constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW;
const GLOB_CHARACTERS = /[*?[]/;

/** `NAME` relative to the folder open at `descriptor`, as a path the kernel resolves through it. */
function at(descriptor: number, name: string): string {
  return `/proc/self/fd/${descriptor}/${name}`;
}

/** The path of the folder open at `descriptor`, as the kernel names it now. */
function pathOfDescriptor(descriptor: number): string {
  return readlinkSync(`/proc/self/fd/${descriptor}`);
}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException).code;
}

/** The mount points of the running kernel (`/proc/self/mountinfo`'s fifth field, octal escapes read). */
function mountPoints(): Set<string> {
  const points = new Set<string>();
  for (const line of readFileSync("/proc/self/mountinfo", "utf8").split("\n")) {
    const field = line.split(" ")[4];
    if (field)
      points.add(
        field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8))),
      );
  }
  return points;
}

/** A walk's running totals and what it left. */
/** What erasing one path came to, as it goes: the counts, the failures, the entries left alone. */
export interface Tally {
  files: number;
  bytes: number;
  folders: number;
  failures: string[];
  kept: string[];
}

/**
 * Adds one path's outcome to the report, its tally and totals: a failure in the tally fails it, and
 * the entries left alone are said as `left` (`left on another mount`).
 */
export function reportPath(
  report: ErasureReport,
  path: { label: string; outcome: ErasedPath["outcome"]; tally: Tally; detail?: string; left: string },
): void {
  const { label, tally, detail } = path;
  const notes = [
    ...(detail ? [detail] : []),
    ...(tally.kept.length > 0 ? [`${path.left}: ${tally.kept.join(", ")}`] : []),
    ...tally.failures,
  ];
  report.paths.push({
    path: label,
    outcome: tally.failures.length > 0 ? "failed" : path.outcome,
    files: tally.files,
    bytes: tally.bytes,
    folders: tally.folders,
    ...(notes.length > 0 ? { detail: notes.join("; ").slice(0, 500) } : {}),
  });
  report.files += tally.files;
  report.bytes += tally.bytes;
  report.failures.push(...tally.failures);
}

/**
 * Empties the folder open at `descriptor` (named `label` in the report), staying on `device` and off
 * every mount point. The folder itself stays.
 */
function emptyFolderAt(descriptor: number, label: string, device: number, mounts: Set<string>, tally: Tally) {
  let names: string[];
  try {
    names = readdirSync(at(descriptor, ""));
  } catch (error) {
    tally.failures.push(`${label}: ${(error as Error).message}`);
    return;
  }
  for (const name of names) {
    const entry = posix.join(label, name);
    let attempts = 1;
    while (eraseEntry(descriptor, name, entry, device, mounts, tally) === "changed") {
      if (++attempts > ATTEMPTS) {
        tally.failures.push(
          `${entry}: kept changing while being erased (swapped with a link?); left, not followed`,
        );
        break;
      }
    }
  }
}

/** Errors meaning an entry changed kind between the look and the act (a folder swapped with a link or a file). */
const CHANGED_KIND = new Set(["ELOOP", "ENOTDIR", "EISDIR"]);
/** How often an entry that keeps changing kind is looked at again before it is left. */
const ATTEMPTS = 5;

/**
 * Erases NAME of the folder open at `descriptor`: a folder is emptied and removed, anything else unlinked.
 * "changed" when it changed kind in between (then nothing was followed; look again).
 */
function eraseEntry(
  descriptor: number,
  name: string,
  entry: string,
  device: number,
  mounts: Set<string>,
  tally: Tally,
): "done" | "changed" {
  const fail = (error: unknown): "done" | "changed" => {
    const code = errorCode(error);
    if (code !== undefined && CHANGED_KIND.has(code)) return "changed";
    if (code !== "ENOENT") tally.failures.push(`${entry}: ${(error as Error).message}`);
    return "done";
  };
  let stat: ReturnType<typeof lstatSync>;
  try {
    stat = lstatSync(at(descriptor, name));
  } catch (error) {
    return fail(error);
  }
  if (!stat.isDirectory()) {
    try {
      unlinkSync(at(descriptor, name));
    } catch (error) {
      return fail(error);
    }
    tally.files += 1;
    if (stat.isFile()) tally.bytes += Number(stat.size);
    return "done";
  }
  if (stat.dev !== device) {
    tally.kept.push(`${entry} (another file system)`);
    return "done";
  }
  let child: number;
  try {
    child = openSync(at(descriptor, name), OPEN_FOLDER);
  } catch (error) {
    return fail(error);
  }
  try {
    if (fstatSync(child).dev !== device || mounts.has(pathOfDescriptor(child))) {
      tally.kept.push(`${entry} (a mount point)`);
      return "done";
    }
    emptyFolderAt(child, entry, device, mounts, tally);
  } finally {
    closeSync(child);
  }
  try {
    rmdirSync(at(descriptor, name));
    tally.folders += 1;
  } catch (error) {
    // Not empty: it holds a mount point or an entry that could not go, both said already.
    if (errorCode(error) !== "ENOTEMPTY") return fail(error);
  }
  return "done";
}

/** Whether NAME in the folder open at `descriptor` is a symbolic link. */
function isLink(descriptor: number, name: string): boolean {
  try {
    return lstatSync(at(descriptor, name)).isSymbolicLink();
  } catch {
    return false;
  }
}

/** Whether a path component is a glob rather than a name. */
function isGlob(part: string): boolean {
  return GLOB_CHARACTERS.test(part);
}

/**
 * Opens the folders a target names, one component at a time from its anchor, never following a link;
 * calls `visit` with each match (its descriptor's parent, its name and its label). Globs match the names
 * in their folder.
 */
function forEachMatch(
  target: WorkTarget,
  visit: (parent: number, name: string, label: string) => void,
  onProblem: (label: string, outcome: "absent" | "not_followed" | "failed", detail: string) => void,
): void {
  let anchor: number;
  try {
    anchor = openSync(target.anchor, constants.O_RDONLY | constants.O_DIRECTORY);
  } catch (error) {
    if (errorCode(error) === "ENOENT") onProblem(target.label, "absent", `${target.anchor} does not exist`);
    else onProblem(target.label, "failed", `${target.anchor}: ${(error as Error).message}`);
    return;
  }
  const descend = (descriptor: number, index: number, label: string) => {
    const part = target.parts[index] as string;
    const isLast = index === target.parts.length - 1;
    let names: string[];
    if (isGlob(part)) {
      const glob = new Bun.Glob(part);
      try {
        names = readdirSync(at(descriptor, "")).filter((name) => glob.match(name));
      } catch (error) {
        onProblem(label, "failed", (error as Error).message);
        return;
      }
    } else names = [part];
    for (const name of names) {
      const next = posix.join(label, name);
      if (isLast) {
        visit(descriptor, name, next);
        continue;
      }
      let child: number;
      try {
        child = openSync(at(descriptor, name), OPEN_FOLDER);
      } catch (error) {
        const code = errorCode(error);
        if (code === "ENOENT")
          onProblem(isGlob(part) ? next : target.label, "absent", `${next} does not exist`);
        else if (code === "ELOOP" || code === "ENOTDIR")
          // O_NOFOLLOW | O_DIRECTORY refuses a link with either code, as it refuses a file.
          onProblem(
            target.label,
            "not_followed",
            isLink(descriptor, name) ? `${next} is a symbolic link; not followed` : `${next} is not a folder`,
          );
        else onProblem(target.label, "failed", `${next}: ${(error as Error).message}`);
        continue;
      }
      try {
        descend(child, index + 1, next);
      } finally {
        closeSync(child);
      }
    }
  };
  try {
    if (target.parts.length === 0) onProblem(target.label, "failed", "names no folder below its anchor");
    else descend(anchor, 0, target.anchorLabel);
  } finally {
    closeSync(anchor);
  }
}

/**
 * Erases each target: a folder is emptied (it stays, empty), a file or a link is deleted (a link's
 * target is never touched). Every path is reported with what it held; nothing outside the targets is
 * changed, whatever links the walk meets or is raced with.
 */
export function eraseWorkTargets(targets: readonly WorkTarget[]): ErasureReport {
  const mounts = mountPoints();
  const report: ErasureReport = { paths: [], files: 0, bytes: 0, failures: [] };
  for (const target of targets) {
    if (target.refused) {
      const detail = `refused by the agent: ${target.refused}`;
      report.paths.push({ path: target.label, outcome: "failed", files: 0, bytes: 0, folders: 0, detail });
      report.failures.push(`${target.label}: ${detail}`);
      continue;
    }
    let matched = false;
    forEachMatch(
      target,
      (parent, name, label) => {
        matched = true;
        const tally: Tally = { files: 0, bytes: 0, folders: 0, failures: [], kept: [] };
        let stat: ReturnType<typeof lstatSync> | null = null;
        try {
          stat = lstatSync(at(parent, name));
        } catch (error) {
          if (errorCode(error) !== "ENOENT") tally.failures.push(`${label}: ${(error as Error).message}`);
        }
        let outcome: ErasedPath["outcome"] = "erased";
        let detail: string | undefined;
        if (stat === null) outcome = tally.failures.length > 0 ? "failed" : "absent";
        else if (stat.isDirectory()) {
          let folder: number | null = null;
          try {
            folder = openSync(at(parent, name), OPEN_FOLDER);
          } catch (error) {
            tally.failures.push(
              `${label}: changed while being erased (${errorCode(error) ?? "error"}); not followed`,
            );
          }
          if (folder !== null)
            try {
              emptyFolderAt(folder, label, fstatSync(folder).dev, mounts, tally);
            } finally {
              closeSync(folder);
            }
        } else {
          // A file or a link (the link goes, its target stays).
          try {
            unlinkSync(at(parent, name));
            tally.files += 1;
            if (stat.isFile()) tally.bytes += Number(stat.size);
            if (stat.isSymbolicLink()) detail = "a symbolic link: removed, its target not followed";
          } catch (error) {
            tally.failures.push(`${label}: ${(error as Error).message}`);
          }
        }
        reportPath(report, {
          label,
          outcome,
          tally,
          ...(detail ? { detail } : {}),
          left: "left on another mount",
        });
      },
      (label, outcome, detail) => {
        matched = true;
        report.paths.push({ path: label, outcome, files: 0, bytes: 0, folders: 0, detail });
        if (outcome === "failed") report.failures.push(`${label}: ${detail}`);
      },
    );
    if (!matched)
      report.paths.push({ path: target.label, outcome: "absent", files: 0, bytes: 0, folders: 0 });
  }
  return report;
}

/** A local user with a home, from ROOT/etc/passwd. */
export interface LocalUser {
  name: string;
  uid: number;
  home: string;
}

/**
 * The people's accounts of the machine: ROOT/etc/passwd's users whose uid is within ROOT/etc/login.defs'
 * UID_MIN..UID_MAX (1000..60000 by default), with a home other than `/`.
 */
export function localUsers(root: string): LocalUser[] {
  const read = (path: string) => {
    try {
      return readFileSync(join(root, path), "utf8");
    } catch {
      return "";
    }
  };
  const definition = (key: string, fallback: number) => {
    const match = read("etc/login.defs").match(new RegExp(`^\\s*${key}\\s+(\\d+)`, "m"));
    return match ? Number(match[1]) : fallback;
  };
  const low = definition("UID_MIN", 1000);
  const high = definition("UID_MAX", 60000);
  const users: LocalUser[] = [];
  for (const line of read("etc/passwd").split("\n")) {
    const [name, , uidText, , , home] = line.split(":");
    const uid = Number(uidText);
    if (!name || !home || !/^\d+$/.test(uidText ?? "") || uid < low || uid > high) continue;
    if (!home.startsWith("/") || posix.normalize(home) === "/") continue;
    users.push({ name, uid, home: posix.normalize(home) });
  }
  return users;
}

/**
 * The targets of the policy's work paths on this machine: `~/X` once per local user (anchored at the
 * user's home under ROOT), an absolute path anchored at ROOT; and enrollment's `--work-dir` folders, which
 * name the machine's own paths (anchored at `/`).
 */
export function workTargets(
  root: string,
  workPaths: readonly string[],
  workDirs: readonly string[],
): WorkTarget[] {
  const split = (path: string) => posix.normalize(path).split("/").filter(Boolean);
  const targets: WorkTarget[] = [];
  const users = workPaths.some((path) => path.startsWith("~/")) ? localUsers(root) : [];
  for (const path of workPaths) {
    // Checked again here: an older policy, or a server that lies, must not point a wipe at the system.
    const refused = workPathProblem(path);
    if (refused !== undefined) {
      targets.push({ label: path, anchor: root, anchorLabel: "/", parts: [], refused });
      continue;
    }
    if (path.startsWith("~/"))
      for (const user of users)
        targets.push({
          label: posix.join(user.home, path.slice(2)),
          anchor: join(root, user.home),
          anchorLabel: user.home,
          parts: split(path.slice(2)),
        });
    else targets.push({ label: path, anchor: root, anchorLabel: "/", parts: split(path) });
  }
  for (const folder of workDirs)
    targets.push({ label: folder, anchor: "/", anchorLabel: "/", parts: split(folder) });
  return targets;
}
