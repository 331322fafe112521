import {
  chmodSync,
  closeSync,
  existsSync,
  fsyncSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { dirname, join } from "node:path";

/** The files of the agent's state folder (default /var/lib/bulwark-agent), each 0600 in a 0700 folder. */
export function statePaths(stateDir: string) {
  return {
    dir: stateDir,
    state: join(stateDir, "state.json"),
    status: join(stateDir, "status.json"),
    wireGuardKey: join(stateDir, "wg.key"),
    certificateKey: join(stateDir, "device.key"),
    certificate: join(stateDir, "device.crt"),
    work: join(stateDir, "work"),
  };
}

export type StatePaths = ReturnType<typeof statePaths>;

/**
 * Creates the state folder (0700) if needed, and narrows the folder or any file in it that is wider
 * than it should be (a copy made with the wrong umask); returns the files it narrowed.
 */
export function prepareStateFolder(stateDir: string): string[] {
  mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const narrowed: string[] = [];
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
  const folder = openSync(dirname(path), "r");
  try {
    fsyncSync(folder);
  } finally {
    closeSync(folder);
  }
}

/** Reads a file of the state folder, or null when it is not there. */
export function readIfPresent(path: string): string | null {
  return existsSync(path) ? readFileSync(path, "utf8") : null;
}

/** Deletes files of the state folder that exist; the others are already gone. */
export function removeFiles(paths: string[]): void {
  for (const path of paths) if (existsSync(path)) unlinkSync(path);
}
