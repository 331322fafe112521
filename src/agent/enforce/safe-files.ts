/**
 * File operations under ROOT that neither follow a symbolic link out of it nor leave half a file: every
 * component below ROOT must be a real directory, writes go to a temporary file that is flushed, renamed
 * over the target, and the directory flushed after.
 */
import { createHash } from "node:crypto";
import {
  closeSync,
  fchmodSync,
  fsyncSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  renameSync,
  rmdirSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { basename, dirname, join, posix } from "node:path";

/** A file as found: its bytes and permission bits; null when there is none. */
export type FileState = { bytes: Buffer; mode: number } | null;

/** The permission bits of a stat mode (with setuid, setgid and sticky). */
export function permissionBits(mode: number): number {
  return mode & 0o7777;
}

function lstatOrNull(path: string) {
  try {
    return lstatSync(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw error;
  }
}

/**
 * The real path of `path` (absolute, as on the machine: `/etc/hosts`) under `root`. Throws when a
 * directory on the way is a symbolic link or not a directory: the agent never writes outside ROOT.
 */
export function pathUnderRoot(root: string, path: string): string {
  const parts = posix.normalize(path).split("/").filter(Boolean);
  if (parts.includes("..")) throw new Error(`${path}: not a path under the root`);
  let current = root;
  for (const part of parts.slice(0, -1)) {
    current = join(current, part);
    const stat = lstatOrNull(current);
    if (stat === null) break;
    if (stat.isSymbolicLink()) throw new Error(`${current} is a symbolic link; the agent does not follow it`);
    if (!stat.isDirectory()) throw new Error(`${current} is not a directory`);
  }
  return join(root, ...parts);
}

/** The file at `fullPath`, or null; a symbolic link or anything but a regular file is refused. */
export function readFileState(fullPath: string): FileState {
  const stat = lstatOrNull(fullPath);
  if (stat === null) return null;
  if (stat.isSymbolicLink()) throw new Error(`${fullPath} is a symbolic link; the agent does not follow it`);
  if (!stat.isFile()) throw new Error(`${fullPath} is not a regular file`);
  return { bytes: readFileSync(fullPath), mode: permissionBits(stat.mode) };
}

/**
 * Flushes a file, or a directory's entries, to the disk. Windows cannot open a directory as a file (NTFS
 * journals a rename itself): there, a directory is left to the file system.
 */
export function syncPath(path: string): void {
  if (process.platform === "win32" && lstatSync(path).isDirectory()) return;
  const descriptor = openSync(path, "r");
  try {
    fsyncSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
}

/** Replaces `fullPath` with `bytes` and exactly `mode`, so that a crash leaves the old or the new file. */
export function writeFileAtomically(fullPath: string, bytes: Uint8Array, mode: number): void {
  const temporary = join(dirname(fullPath), `.${basename(fullPath)}.bulwark-${process.pid}.tmp`);
  const descriptor = openSync(temporary, "w", 0o600);
  try {
    writeSync(descriptor, bytes);
    // fchmod is not narrowed by the umask: the file gets exactly the mode asked for.
    fchmodSync(descriptor, mode);
    fsyncSync(descriptor);
  } catch (error) {
    closeSync(descriptor);
    unlinkSync(temporary);
    throw error;
  }
  closeSync(descriptor);
  renameSync(temporary, fullPath);
  syncPath(dirname(fullPath));
}

/** Deletes `fullPath` if it is there, and flushes its directory. */
export function removeFileDurably(fullPath: string): void {
  if (lstatOrNull(fullPath) === null) return;
  unlinkSync(fullPath);
  syncPath(dirname(fullPath));
}

/** The directories above `path` (paths under ROOT, outermost first) that do not exist yet. */
export function missingDirectories(root: string, path: string): string[] {
  const missing: string[] = [];
  for (let folder = posix.dirname(path); folder !== "/"; folder = posix.dirname(folder)) {
    if (lstatOrNull(join(root, folder)) !== null) break;
    missing.unshift(folder);
  }
  return missing;
}

/** Creates `folders` (paths under ROOT, outermost first), each 0755. */
export function createDirectories(root: string, folders: readonly string[]): void {
  for (const folder of folders) {
    const fullPath = join(root, folder);
    if (lstatOrNull(fullPath) !== null) continue;
    mkdirSync(fullPath, { mode: 0o755 });
    // Modes mean nothing on Windows: a folder there gets its parent's ACL.
    if (process.platform !== "win32") {
      const descriptor = openSync(fullPath, "r");
      try {
        fchmodSync(descriptor, 0o755);
      } finally {
        closeSync(descriptor);
      }
    }
    syncPath(dirname(fullPath));
  }
}

/** Removes those of `folders` (outermost first) that exist and are empty, innermost first. */
export function removeEmptyDirectories(root: string, folders: readonly string[]): void {
  for (const folder of [...folders].reverse()) {
    const fullPath = join(root, folder);
    const stat = lstatOrNull(fullPath);
    if (stat?.isDirectory() && readdirSync(fullPath).length === 0) {
      rmdirSync(fullPath);
      syncPath(dirname(fullPath));
    }
  }
}

/** The SHA-256 of a file (hex), read a MiB at a time (the executable is large). */
export function sha256OfFile(path: string): string {
  const hash = createHash("sha256");
  const buffer = Buffer.alloc(1 << 20);
  const descriptor = openSync(path, "r");
  try {
    for (let read = readSync(descriptor, buffer); read > 0; read = readSync(descriptor, buffer))
      hash.update(buffer.subarray(0, read));
  } finally {
    closeSync(descriptor);
  }
  return hash.digest("hex");
}

/** `bytes` as UTF-8 text, or null when they are not UTF-8. */
export function textOf(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder("utf-8", { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}
