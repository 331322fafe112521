/**
 * Erases the work profile on Windows as run/erase-work-profile.ts does on Linux, with the same report: a
 * user who owns a work folder must not be able to turn a wipe, run as SYSTEM, against files they could
 * not delete themselves. Only Node's fs is used, so the walk runs (and is tested) on Linux too.
 *
 * Links are never followed. On Windows, Bun's node:fs calls libuv (Bun's src/sys/sys_uv: `uv_fs_lstat`,
 * `uv_fs_unlink`, `uv_fs_rmdir`). libuv's lstat (`fs__stat_handle` in src/win/fs.c) opens an entry with
 * FILE_FLAG_OPEN_REPARSE_POINT, and `fs__stat_assign_statbuf` reports it as a link (S_IFLNK, so
 * `isSymbolicLink()`) when `fs__readlink_handle` reads it as a symbolic link (IO_REPARSE_TAG_SYMLINK) or
 * a junction to a drive path (IO_REPARSE_TAG_MOUNT_POINT). Such an entry is never entered but removed
 * itself: libuv's `fs__unlink_rmdir` opens the link, not its target; where unlink refuses a directory
 * link or junction (Win32's DeleteFileW does), rmdir removes it.
 *
 * A junction to a volume (`\??\Volume{...}\`, what mounting a volume in a folder makes) and reparse
 * points of other kinds are no links to libuv: its lstat then follows them and says "directory". So a
 * folder is entered only when its real path (`realpathSync.native`, the final path Windows resolves) is
 * its parent's real path and its name; one that leads elsewhere is left, and so is a folder on another
 * volume (another `dev`), as the Linux eraser leaves other mounts.
 *
 * Windows offers no openat-style walk from Node (no lstat, unlink or rmdir relative to an open folder, no
 * /proc/self/fd), so every step names a full path, and the walk checks where the Linux one holds: each
 * folder entered is remembered by its volume and file id (lstat's `dev` and `ino`, read as bigints: NTFS
 * ids do not fit a double), and after a folder is listed and before each entry in it is removed, every
 * folder from the anchor down to it is looked at again. One that is no longer the same folder (swapped
 * for a link or junction, or now leading elsewhere) stops the target, failed, saying so.
 *
 * What remains is the race between that look and the unlink or rmdir right after it: a user who swaps a
 * folder on the way for a junction at that very moment makes the agent, running as SYSTEM, delete the
 * one entry of that name where the junction leads (any file SYSTEM may delete, which is most of the
 * machine's, or an empty folder). Each such deletion is a race won anew: the walk never goes on where a
 * junction leads (entering a folder needs its real path and id to agree with the walk, and every removal
 * in it needs the whole chain to be the same folders again), and a swap the walk sees stops the target.
 * Closing the race takes handles (a folder held open without FILE_SHARE_DELETE, deletion relative to a
 * folder's handle), which Node's fs does not offer.
 */
import {
  type BigIntStats,
  lstatSync,
  readdirSync,
  realpathSync,
  rmdirSync,
  statSync,
  unlinkSync,
} from "node:fs";
import { isAbsolute, join, normalize, parse, sep } from "node:path";
import { workPathProblem } from "../../lib/work-path-rules";
import {
  type ErasedPath,
  type ErasureReport,
  reportPath,
  type Tally,
  type WorkTarget,
} from "../run/erase-work-profile";
import type { ProfileList, WindowsEnvironment } from "./profiles";

/** A work path on this machine; `failure` says why it cannot be erased here (it is reported failed). */
export interface WindowsWorkTarget extends WorkTarget {
  failure?: string;
  /**
   * The anchor is a profile folder ProfileList names: its absence fails the path rather than reporting it
   * absent (a name read in another code page, a profile moved), so that no one's work stays unsaid.
   */
  anchorMustExist?: boolean;
}

/**
 * Top-level folders of the system drive that no absolute work path may name, in lower case (Windows
 * compares names without regard to case).
 */
const WINDOWS_SYSTEM_FOLDERS = new Set([
  "windows",
  "program files",
  "program files (x86)",
  "program files (arm)",
  "programdata",
  "users",
  "documents and settings",
  "boot",
  "recovery",
  "system volume information",
  "$recycle.bin",
  "config.msi",
  "perflogs",
  "windows.old",
  "$winreagent",
]);

const DEVICE_NAME = /^(con|prn|aux|nul|com\d|lpt\d)(\.|$)/i;
const GLOB_CHARACTERS = /[*?[]/;

/**
 * Why `path` (a policy's work path, already allowed by `workPathProblem`) cannot be one on Windows, or
 * undefined: a component Windows would read as another name (a trailing dot or space, which it drops,
 * `:`, a device name such as `NUL`) or with a character no name may hold, or an absolute path in one of
 * the system drive's own folders (`/Windows`, `/Program Files`, `/Users`, ...) or whose first folder is a
 * short name (`/PROGRA~1` is `/Program Files`).
 */
export function windowsWorkPathProblem(path: string): string | undefined {
  const isHome = path.startsWith("~/");
  const parts = (isHome ? path.slice(2) : path.slice(1)).split("/");
  if (parts.some((part) => /[. ]$/.test(part)))
    return "must not end a component with a dot or a space (Windows drops them: /Windows./x is /Windows/x)";
  if (parts.some((part) => part.includes(":")))
    return "must not contain : (on Windows, a drive or a file's alternate stream)";
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  if (parts.some((part) => /[<>"|\u0000-\u001f]/.test(part)))
    return 'must not contain < > " | or control characters (no Windows name holds them)';
  if (parts.some((part) => DEVICE_NAME.test(part)))
    return "must not name a device (CON, PRN, AUX, NUL, COM1, LPT1, ...)";
  if (isHome) return undefined;
  const first = parts[0] as string;
  if (WINDOWS_SYSTEM_FOLDERS.has(first.toLowerCase()))
    return `must not be in /${first}: a wipe erases work data, never the system`;
  if (first.includes("~"))
    return `must name its first folder in full, not by a short name (/PROGRA~1 is /Program Files)`;
  return undefined;
}

/** The variable's value, named without regard to case as Windows does. */
function variable(env: WindowsEnvironment, name: string): string | undefined {
  for (const [key, value] of Object.entries(env)) if (key.toLowerCase() === name.toLowerCase()) return value;
  return undefined;
}

/**
 * The targets of the policy's work paths on this machine: `~/X` once per person's profile (anchored at
 * the profile's folder), an absolute `/A/B` on the system drive (`%SystemDrive%\A\B`); and enrollment's
 * `--work-dir` folders, the machine's own paths (anchored at their drive's root).
 */
export function windowsWorkTargets(
  workPaths: readonly string[],
  workDirs: readonly string[],
  profiles: ProfileList,
  env: WindowsEnvironment,
): WindowsWorkTarget[] {
  const targets: WindowsWorkTarget[] = [];
  const unplaced = (label: string, failure: string) =>
    targets.push({ label, anchor: "", anchorLabel: "", parts: [], failure });
  const drive = variable(env, "SystemDrive");
  // `C:` alone is the current folder of drive C; its root is `C:\`.
  const systemRoot =
    drive === undefined || drive === "" ? null : /^[A-Za-z]:$/.test(drive) ? `${drive}\\` : drive;
  for (const path of workPaths) {
    // Checked again here: an older policy, or a server that lies, must not point a wipe at the system.
    const refused = workPathProblem(path) ?? windowsWorkPathProblem(path);
    if (refused !== undefined) {
      targets.push({ label: path, anchor: "", anchorLabel: "", parts: [], refused });
      continue;
    }
    const isHome = path.startsWith("~/");
    const parts = (isHome ? path.slice(2) : path.slice(1)).split("/");
    if (isHome) {
      if (profiles.problems.length > 0) unplaced(path, profiles.problems.join("; "));
      for (const profile of profiles.profiles)
        targets.push({
          label: join(profile.folder, ...parts),
          anchor: profile.folder,
          anchorLabel: profile.folder,
          parts,
          anchorMustExist: true,
        });
    } else if (systemRoot === null) unplaced(path, "the system drive is unknown (SystemDrive is not set)");
    else
      targets.push({ label: join(systemRoot, ...parts), anchor: systemRoot, anchorLabel: systemRoot, parts });
  }
  for (const folder of workDirs) {
    if (!isAbsolute(folder)) {
      unplaced(folder, "a --work-dir must be a full path (C:\\Work)");
      continue;
    }
    const normalized = normalize(folder);
    const root = parse(normalized).root;
    targets.push({
      label: folder,
      anchor: root,
      anchorLabel: root,
      parts: normalized.slice(root.length).split(sep).filter(Boolean),
    });
  }
  return targets;
}

/** Whether a path component is a glob rather than a name. */
function isGlob(part: string): boolean {
  return GLOB_CHARACTERS.test(part);
}

/**
 * A glob component (`*`, `?`, `[abc]`, `[a-z]`, `[!a]`) as a test of one name, without regard to case
 * as Windows names are compared; throws on a set it cannot read (a range backwards).
 */
function globMatcher(part: string): (name: string) => boolean {
  let source = "";
  for (let index = 0; index < part.length; index++) {
    const character = part[index] as string;
    const close = character === "[" ? part.indexOf("]", index + 2) : -1;
    if (character === "*") source += "[\\s\\S]*";
    else if (character === "?") source += "[\\s\\S]";
    else if (close !== -1) {
      let set = part.slice(index + 1, close);
      const isNegated = set.startsWith("!") || set.startsWith("^");
      if (isNegated) set = set.slice(1);
      source += `[${isNegated ? "^" : ""}${set.replace(/[\\\]^[]/g, "\\$&")}]`;
      index = close;
    } else source += character.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");
  }
  const pattern = new RegExp(`^${source}$`, "i");
  return (name) => pattern.test(name);
}

/** A folder the walk entered: how it is named, where it really is, and which folder it is. */
interface Folder {
  path: string;
  /** Its real path (the parent's real path and its name): its entries' must follow from it. */
  real: string;
  label: string;
  dev: bigint;
  ino: bigint;
  /** The anchor is trusted as it is (stat follows it); every folder below it is looked at with lstat. */
  isAnchor: boolean;
  parent: Folder | null;
}

/** A folder on the way changed while the walk was in it: the target stops. */
class FolderChanged extends Error {
  isReported = false;
  constructor(label: string) {
    super(`${label} changed while being erased (swapped for a link or junction?); stopped, nothing followed`);
  }
}

function errorCode(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException).code;
}

/** Compares two paths as Windows does (without regard to case, `\\?\` prefixes aside). */
function isSamePath(left: string, right: string): boolean {
  const plain = (path: string) =>
    path
      .replace(/^\\\\\?\\UNC\\/i, "\\\\")
      .replace(/^\\\\\?\\/, "")
      .toLowerCase();
  return plain(left) === plain(right);
}

/**
 * Looks again at every folder from the anchor down to `folder`; throws FolderChanged when one is not the
 * folder the walk entered (a link or junction now, another folder, gone).
 */
function checkFolders(folder: Folder): void {
  const chain: Folder[] = [];
  for (let current: Folder | null = folder; current !== null; current = current.parent)
    chain.unshift(current);
  for (const current of chain) {
    let stat: BigIntStats | undefined;
    try {
      stat = current.isAnchor
        ? statSync(current.path, { bigint: true })
        : lstatSync(current.path, { bigint: true });
    } catch {
      throw new FolderChanged(current.label);
    }
    if (stat.isSymbolicLink() || !stat.isDirectory() || stat.dev !== current.dev || stat.ino !== current.ino)
      throw new FolderChanged(current.label);
  }
}

/** What a name in an entered folder is, looked at without following it. */
type Look =
  | { kind: "absent" }
  | { kind: "link"; stat: BigIntStats }
  | { kind: "file"; stat: BigIntStats }
  | { kind: "elsewhere" }
  | { kind: "folder"; folder: Folder };

/**
 * Looks at NAME in `parent` without following it: a link (or junction), a file (or another non-folder),
 * a folder (entered only when its real path is its parent's and its name), or a folder whose path leads
 * elsewhere (a volume mounted there, another reparse point). Throws FolderChanged when the way changed.
 */
function lookAt(parent: Folder, name: string, label: string): Look {
  const path = join(parent.path, name);
  let stat: BigIntStats;
  try {
    stat = lstatSync(path, { bigint: true });
  } catch (error) {
    if (errorCode(error) === "ENOENT") return { kind: "absent" };
    throw error;
  }
  if (stat.isSymbolicLink()) return { kind: "link", stat };
  if (!stat.isDirectory()) return { kind: "file", stat };
  let real: string;
  try {
    real = realpathSync.native(path);
  } catch (error) {
    if (errorCode(error) === "ENOENT") return { kind: "absent" };
    throw error;
  }
  const expected = join(parent.real, name);
  if (!isSamePath(real, expected)) {
    // Elsewhere for good (a mount), or because the way was swapped just now (then this throws).
    checkFolders(parent);
    return { kind: "elsewhere" };
  }
  if (stat.ino === 0n) throw new Error("its file system gives no file ids, so it cannot be walked safely");
  return {
    kind: "folder",
    folder: { path, real: expected, label, dev: stat.dev, ino: stat.ino, isAnchor: false, parent },
  };
}

/**
 * Removes a file or a link itself (a link's target is never touched): unlink, or rmdir for a directory
 * link or junction that unlink refuses on Windows.
 */
function removeNonFolder(path: string, stat: BigIntStats): void {
  try {
    unlinkSync(path);
  } catch (unlinkError) {
    const code = errorCode(unlinkError);
    if (!stat.isSymbolicLink() || (code !== "EPERM" && code !== "EACCES" && code !== "EISDIR"))
      throw unlinkError;
    try {
      rmdirSync(path);
    } catch (rmdirError) {
      // libuv's rmdir says ENOENT for what is no folder: then unlink's complaint is the one to tell.
      throw errorCode(rmdirError) === "ENOENT" ? unlinkError : rmdirError;
    }
  }
}

/** A walk's running totals and what it left. */

/** Errors meaning an entry changed kind between the look and the act (a folder swapped with a link or a file). */
const CHANGED_KIND = new Set(["ELOOP", "ENOTDIR", "EISDIR", "ENOTEMPTY"]);
/** How often an entry that keeps changing kind is looked at again before it is left. */
const ATTEMPTS = 5;

/**
 * Empties `folder`, staying on its volume and off every folder that leads elsewhere; the folder itself
 * stays. Throws FolderChanged when a folder on the way changed.
 */
function emptyFolder(folder: Folder, tally: Tally): void {
  let names: string[];
  try {
    names = readdirSync(folder.path);
  } catch (error) {
    tally.failures.push(`${folder.label}: ${(error as Error).message}`);
    return;
  }
  // What was listed is this folder's only if the way is still the same.
  checkFolders(folder);
  for (const name of names) {
    const entry = join(folder.label, name);
    let attempts = 1;
    while (eraseEntry(folder, name, entry, tally) === "changed") {
      if (++attempts > ATTEMPTS) {
        tally.failures.push(
          `${entry}: kept changing while being erased (swapped with a link?); left, not followed`,
        );
        break;
      }
    }
  }
}

/**
 * Erases NAME of `folder`: a folder is emptied and removed, anything else removed itself. "changed" when
 * it changed kind in between (then nothing was followed; look again).
 */
function eraseEntry(folder: Folder, name: string, entry: string, tally: Tally): "done" | "changed" {
  const fail = (error: unknown): "done" | "changed" => {
    if (error instanceof FolderChanged) throw error;
    const code = errorCode(error);
    if (code !== undefined && CHANGED_KIND.has(code)) return "changed";
    if (code !== "ENOENT") tally.failures.push(`${entry}: ${(error as Error).message}`);
    return "done";
  };
  const path = join(folder.path, name);
  let look: Look;
  try {
    look = lookAt(folder, name, entry);
  } catch (error) {
    return fail(error);
  }
  if (look.kind === "absent") return "done";
  if (look.kind === "elsewhere") {
    tally.kept.push(`${entry} (leads elsewhere: a mounted volume or another reparse point)`);
    return "done";
  }
  if (look.kind === "link" || look.kind === "file") {
    checkFolders(folder);
    try {
      removeNonFolder(path, look.stat);
    } catch (error) {
      return fail(error);
    }
    tally.files += 1;
    if (look.stat.isFile()) tally.bytes += Number(look.stat.size);
    return "done";
  }
  if (look.folder.dev !== folder.dev) {
    tally.kept.push(`${entry} (another volume)`);
    return "done";
  }
  emptyFolder(look.folder, tally);
  checkFolders(folder);
  try {
    rmdirSync(path);
    tally.folders += 1;
  } catch (error) {
    // Not empty: it holds an entry that was left or could not go, both said already.
    if (errorCode(error) !== "ENOTEMPTY") return fail(error);
  }
  return "done";
}

/**
 * Walks a target's components from its anchor, one at a time and never following a link; calls `visit`
 * with each match (its folder, its name and its label). Globs match the names in their folder. A folder
 * on the way that changes stops the target, failed.
 */
function forEachMatch(
  target: WindowsWorkTarget,
  visit: (parent: Folder, name: string, label: string) => void,
  onProblem: (label: string, outcome: "absent" | "not_followed" | "failed", detail: string) => void,
): void {
  let anchor: Folder;
  try {
    const stat = statSync(target.anchor, { bigint: true });
    if (!stat.isDirectory()) {
      onProblem(target.label, "failed", `${target.anchor} is not a folder`);
      return;
    }
    const real = realpathSync.native(target.anchor);
    anchor = {
      path: target.anchor,
      real,
      label: target.anchorLabel,
      dev: stat.dev,
      ino: stat.ino,
      isAnchor: true,
      parent: null,
    };
  } catch (error) {
    if (errorCode(error) === "ENOENT" && target.anchorMustExist)
      onProblem(
        target.label,
        "failed",
        `the profile folder ${target.anchor} that the registry's ProfileList names cannot be found: its work is not erased`,
      );
    else if (errorCode(error) === "ENOENT")
      onProblem(target.label, "absent", `${target.anchor} does not exist`);
    else onProblem(target.label, "failed", `${target.anchor}: ${(error as Error).message}`);
    return;
  }
  const descend = (folder: Folder, index: number) => {
    const part = target.parts[index] as string;
    const isLast = index === target.parts.length - 1;
    let names: string[];
    if (isGlob(part)) {
      let matches: (name: string) => boolean;
      try {
        matches = globMatcher(part);
      } catch {
        // A range backwards (`[z-a]`): the policy's rules let it through, no name can match it.
        onProblem(target.label, "failed", `${part} is not a pattern the agent can read`);
        return;
      }
      try {
        names = readdirSync(folder.path).filter(matches);
      } catch (error) {
        onProblem(folder.label, "failed", (error as Error).message);
        return;
      }
      checkFolders(folder);
    } else names = [part];
    for (const name of names) {
      const next = join(folder.label, name);
      if (isLast) {
        visit(folder, name, next);
        continue;
      }
      let look: Look;
      try {
        look = lookAt(folder, name, next);
      } catch (error) {
        if (error instanceof FolderChanged) throw error;
        onProblem(target.label, "failed", `${next}: ${(error as Error).message}`);
        continue;
      }
      if (look.kind === "absent")
        onProblem(isGlob(part) ? next : target.label, "absent", `${next} does not exist`);
      else if (look.kind === "link")
        onProblem(target.label, "not_followed", `${next} is a symbolic link or junction; not followed`);
      else if (look.kind === "file") onProblem(target.label, "not_followed", `${next} is not a folder`);
      else if (look.kind === "elsewhere")
        onProblem(
          target.label,
          "not_followed",
          `${next} leads elsewhere (a mounted volume or another reparse point); not followed`,
        );
      else descend(look.folder, index + 1);
    }
  };
  try {
    if (target.parts.length === 0) onProblem(target.label, "failed", "names no folder below its anchor");
    else descend(anchor, 0);
  } catch (error) {
    if (!(error instanceof FolderChanged)) throw error;
    if (!error.isReported) onProblem(target.label, "failed", error.message);
  }
}

/**
 * Erases each target: a folder is emptied (it stays, empty), a file or a link is deleted (a link's
 * target is never touched). Every path is reported with what it held, in the Linux eraser's report.
 */
export function eraseWindowsTargets(targets: readonly WindowsWorkTarget[]): ErasureReport {
  const report: ErasureReport = { paths: [], files: 0, bytes: 0, failures: [] };
  const unerased = (label: string, detail: string) => {
    report.paths.push({ path: label, outcome: "failed", files: 0, bytes: 0, folders: 0, detail });
    report.failures.push(`${label}: ${detail}`);
  };
  for (const target of targets) {
    if (target.refused) {
      unerased(target.label, `refused by the agent: ${target.refused}`);
      continue;
    }
    if (target.failure) {
      unerased(target.label, target.failure);
      continue;
    }
    let matched = false;
    forEachMatch(
      target,
      (parent, name, label) => {
        matched = true;
        const tally: Tally = { files: 0, bytes: 0, folders: 0, failures: [], kept: [] };
        let outcome: ErasedPath["outcome"] = "erased";
        let detail: string | undefined;
        let changed: FolderChanged | null = null;
        try {
          const look = lookAt(parent, name, label);
          if (look.kind === "absent") outcome = "absent";
          else if (look.kind === "elsewhere") {
            outcome = "not_followed";
            detail = `${label} leads elsewhere (a mounted volume or another reparse point); not followed`;
          } else if (look.kind === "folder") emptyFolder(look.folder, tally);
          else {
            // A file or a link (the link goes, its target stays).
            checkFolders(parent);
            removeNonFolder(join(parent.path, name), look.stat);
            tally.files += 1;
            if (look.stat.isFile()) tally.bytes += Number(look.stat.size);
            if (look.kind === "link")
              detail = "a symbolic link or junction: removed, its target not followed";
          }
        } catch (error) {
          if (error instanceof FolderChanged) {
            changed = error;
            error.isReported = true;
          }
          if (errorCode(error) !== "ENOENT") tally.failures.push(`${label}: ${(error as Error).message}`);
        }
        reportPath(report, { label, outcome, tally, ...(detail ? { detail } : {}), left: "left alone" });
        // A swap met on the way: nothing more of this target is erased.
        if (changed !== null) throw changed;
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
