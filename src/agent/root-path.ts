/**
 * Paths of the machine the agent reads, under ROOT (`--root`, `/` for the real machine). A symbolic link
 * is resolved as it would be on that machine, with ROOT as `/`: an absolute target starts again at ROOT,
 * and a target that climbs above ROOT is refused, so nothing outside ROOT is ever read through a link.
 */
import { lstat, readdir, readFile, readlink, realpath } from "node:fs/promises";
import { isAbsolute, join, relative } from "node:path";

/** Raised for a path that a link would take out of ROOT, or a chain of links too long to follow. */
export class RootPathError extends Error {}

/** Links followed for one path at most, as Linux's ELOOP limit (40). */
const MAX_LINKS = 40;

/** ROOT, with its own links resolved: the real folder every resolved path must stay below. */
export async function realRoot(root: string): Promise<string> {
  return realpath(root);
}

/**
 * The real path of `path` (as seen on the machine: `/sys/dev/block/8:2`) under `root` (a real path, from
 * `realRoot`), every link on the way resolved inside ROOT. A missing last component is fine (the caller
 * reads it and finds it absent); a missing folder on the way is too. Throws `RootPathError` for a link
 * that leaves ROOT.
 */
export async function resolveInRoot(root: string, path: string): Promise<string> {
  const done: string[] = [];
  const pending = components(path);
  let links = 0;
  while (pending.length > 0) {
    const part = pending.shift() as string;
    if (part === "..") {
      if (done.length === 0) throw new RootPathError(`${path} leads out of ${root}`);
      done.pop();
      continue;
    }
    const current = join(root, ...done, part);
    const stats = await lstat(current).catch(() => null);
    if (!stats?.isSymbolicLink()) {
      done.push(part);
      if (!stats) return join(root, ...done, ...pending.filter((rest) => rest !== ".."));
      continue;
    }
    if (++links > MAX_LINKS) throw new RootPathError(`${path}: too many levels of symbolic links`);
    const target = await readlink(current);
    if (isAbsolute(target)) done.length = 0;
    pending.unshift(...components(target));
  }
  return join(root, ...done);
}

/** A path's parts without empty ones and `.`. */
function components(path: string): string[] {
  return path.split("/").filter((part) => part !== "" && part !== ".");
}

/**
 * What the fact readers read of a machine: a MachineTree, or a recording of one (`agent capture`) and
 * its replay (`agent facts --from-capture`).
 */
export type MachineReader = Pick<MachineTree, "readText" | "exists" | "list" | "canonical" | "isLiveSystem">;

/** Reads what the machine under ROOT has at `path`, the real files read under ROOT only. */
export class MachineTree {
  private constructor(readonly root: string) {}

  /** The tree at `root` (a folder; `/` for the real machine). */
  static async open(root: string): Promise<MachineTree> {
    return new MachineTree(await realRoot(root));
  }

  /** Whether the machine's root is the real `/` (then live sources, such as `wg` and `nft`, describe it). */
  get isLiveSystem(): boolean {
    return this.root === "/";
  }

  /** The real path of `path` under ROOT. */
  resolve(path: string): Promise<string> {
    return resolveInRoot(this.root, path);
  }

  /** `path` with every link resolved, as the machine names it (`/sys/devices/.../nvme0n1p3`). */
  async canonical(path: string): Promise<string> {
    return `/${relative(this.root, await this.resolve(path))}`;
  }

  /** The file's text, or null when it does not exist (other failures, such as EACCES, are thrown). */
  async readText(path: string): Promise<string | null> {
    try {
      return await readFile(await this.resolve(path), "utf8");
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }

  /** Whether something exists at `path` (a link is followed, inside ROOT). */
  async exists(path: string): Promise<boolean> {
    return (await lstat(await this.resolve(path)).catch(() => null)) !== null;
  }

  /** The names in the folder at `path`, or null when there is none. */
  async list(path: string): Promise<string[] | null> {
    try {
      return (await readdir(await this.resolve(path))).sort();
    } catch (error) {
      if (isMissing(error)) return null;
      throw error;
    }
  }
}

function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException | null)?.code;
  return code === "ENOENT" || code === "ENOTDIR";
}
