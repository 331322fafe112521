import {
  accessSync,
  chmodSync,
  closeSync,
  constants,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  statSync,
  unlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { dirname, join, resolve } from "node:path";

/** The files of the agent's state folder (default /var/lib/bulwark-agent), each 0600 in a 0700 folder. */
export function statePaths(stateDir: string) {
  return {
    dir: stateDir,
    state: join(stateDir, "state.json"),
    status: join(stateDir, "status.json"),
    wireGuardKey: join(stateDir, "wg.key"),
    certificateKey: join(stateDir, "device.key"),
    certificate: join(stateDir, "device.crt"),
    /** A copy of enroll's --ca-file: the CA that verifies the server's TLS certificate. */
    serverCa: join(stateDir, "server-ca.pem"),
  };
}

export type StatePaths = ReturnType<typeof statePaths>;

/**
 * The state folder cannot be used as the command needs it (not readable or writable by this user, a
 * file, ...): one line naming it and what to do, exit code 2. Nothing was sent to the server.
 */
export class StateFolderError extends Error {
  readonly exitCode = 2;
}

/** What a failure to read or write `path` means for the person who ran the command. */
function stateFolderError(path: string, error: unknown, verb: "read" | "write"): StateFolderError {
  const { code, message } = error as NodeJS.ErrnoException;
  if (code === "EACCES" || code === "EPERM")
    return new StateFolderError(
      `cannot ${verb} ${path}: ${process.platform === "win32" ? "run it from an elevated prompt (as an administrator)" : "run as root (sudo)"}`,
    );
  return new StateFolderError(`cannot ${verb} ${path}: ${message}`);
}

/** --state-dir names a file: said as such rather than as "not enrolled". */
function refuseFile(stateDir: string): void {
  if (statSync(stateDir, { throwIfNoEntry: false })?.isFile())
    throw new StateFolderError(`--state-dir ${stateDir} is a file, not a folder`);
}

/**
 * Checks that this user can read the state folder (the commands that read it: status, plan, run,
 * unenroll) and, with `write`, write in it. A folder that does not exist is not enrolled, which each
 * command says itself. A 0700 folder of root's read by another user would otherwise look empty: "not
 * enrolled".
 */
export function checkStateFolder(stateDir: string, access: { write: boolean }): void {
  try {
    refuseFile(stateDir);
    if (!statSync(stateDir, { throwIfNoEntry: false })) return;
    accessSync(stateDir, constants.R_OK | constants.X_OK);
  } catch (error) {
    throw error instanceof StateFolderError ? error : stateFolderError(stateDir, error, "read");
  }
  try {
    if (access.write) accessSync(stateDir, constants.W_OK);
  } catch (error) {
    throw stateFolderError(stateDir, error, "write");
  }
}

/**
 * Makes the state folder (0700) and proves this user can write in it (a file written and removed), before
 * enrollment asks the server anything: enrolling, then failing to keep the identity, would leave a
 * device on the server that this machine cannot use, and its hardware id taken. Returns the folders it
 * created, deepest first, for `removeCreatedFolders` when the enrollment then fails.
 */
export function claimStateFolder(stateDir: string): string[] {
  let created: string | undefined;
  try {
    refuseFile(stateDir);
    created = mkdirSync(stateDir, { recursive: true, mode: 0o700 });
    const probe = join(stateDir, `.write-probe-${process.pid}`);
    writeFileSync(probe, "", { mode: 0o600 });
    unlinkSync(probe);
  } catch (error) {
    if (created) removeCreatedFolders(foldersBetween(stateDir, created));
    throw error instanceof StateFolderError ? error : stateFolderError(stateDir, error, "write");
  }
  return created ? foldersBetween(stateDir, created) : [];
}

/** `stateDir` and its parents up to `top` (the first folder mkdir created), deepest first. */
function foldersBetween(stateDir: string, top: string): string[] {
  const folders = [resolve(stateDir)];
  while (folders.at(-1) !== resolve(top) && dirname(folders.at(-1) as string) !== folders.at(-1))
    folders.push(dirname(folders.at(-1) as string));
  return folders;
}

/** Removes the folders `claimStateFolder` created when they are empty again (an enrollment that failed). */
export function removeCreatedFolders(folders: readonly string[]): void {
  for (const folder of folders) {
    try {
      rmdirSync(folder);
    } catch {
      return; // not empty: something else is in it now, and it stays
    }
  }
}

/**
 * Creates the state folder (0700) if needed, and narrows the folder or any file in it that is wider
 * than it should be (a copy made with the wrong umask); returns the files it narrowed.
 */
export function prepareStateFolder(stateDir: string): string[] {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const narrowed: string[] = [];
  // Modes mean nothing on Windows: the folder's ACL (set at enrollment) keeps it to SYSTEM and Administrators.
  if (process.platform === "win32") return narrowed;
  if ((statSync(stateDir).mode & 0o077) !== 0) {
    chmodSync(stateDir, 0o700);
    narrowed.push(stateDir);
  }
  for (const name of readdirSync(stateDir)) {
    const path = join(stateDir, name);
    const stat = statSync(path);
    if (stat.isFile() && (stat.mode & 0o077) !== 0) {
      chmodSync(path, 0o600);
      narrowed.push(path);
    }
  }
  return narrowed;
}

/**
 * Writes a file so that a crash leaves either the old or the new content, never a part: a temporary
 * file beside it (0600 unless `mode`), flushed, renamed over it, and the folder flushed.
 */
export function writeFileAtomic(path: string, content: string | Uint8Array, mode = 0o600): void {
  const temporary = `${path}.${process.pid}.tmp`;
  const descriptor = openSync(temporary, "w", mode);
  try {
    writeSync(descriptor, typeof content === "string" ? Buffer.from(content) : content);
    fsyncSync(descriptor);
  } finally {
    closeSync(descriptor);
  }
  chmodSync(temporary, mode);
  renameSync(temporary, path);
  // Windows cannot open a folder as a file; NTFS journals the rename itself.
  if (process.platform === "win32") return;
  const folder = openSync(dirname(path), "r");
  try {
    fsyncSync(folder);
  } finally {
    closeSync(folder);
  }
}

/**
 * Reads a file of the state folder, or null when it is not there. One this user may not read is an
 * error that says so, never "not there" (a root-only state folder read by another user).
 */
export function readIfPresent(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch (error) {
    const { code } = error as NodeJS.ErrnoException;
    if (code === "ENOENT" || code === "ENOTDIR") return null;
    throw stateFolderError(path, error, "read");
  }
}

/** Deletes files of the state folder that exist; the others are already gone. */
export function removeFiles(paths: string[]): void {
  for (const path of paths) if (existsSync(path)) unlinkSync(path);
}
