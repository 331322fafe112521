/**
 * The profile folders of the people who use this Windows machine, where a wipe erases each `~/` work
 * path. Windows lists every profile under `HKLM\SOFTWARE\Microsoft\Windows NT\CurrentVersion\ProfileList`,
 * one subkey per account's security identifier (SID) with the folder in its `ProfileImagePath` value,
 * read here with `reg export KEY FILE` (a UTF-16 `.reg` file: registry.ts; the command:
 * learn.microsoft.com/windows-server/administration/windows-commands/reg-export), or from a `reg query
 * KEY /s` output.
 *
 * People's accounts are the SIDs `S-1-5-21-...` (local and domain users) and `S-1-12-1-...` (Microsoft
 * Entra ID users); the rest are the system's own (`S-1-5-18` LocalSystem, `S-1-5-19` LocalService,
 * `S-1-5-20` NetworkService, `S-1-5-80-...` services), whose profiles hold no one's work
 * (learn.microsoft.com/windows-server/identity/ad-ds/manage/understand-security-identifiers). A key
 * ending in `.bak` is the profile Windows set aside when it could not load it (the user then gets a
 * temporary one): its folder is that person's too.
 */
import { win32 } from "node:path";
import type { ProgramRunner } from "../facts/fact";
import {
  longKeyName,
  parseRegQuery,
  type RegistryKey,
  readRegistryTree,
  registryValue as valueNamed,
} from "./registry";

export const PROFILE_LIST_KEY = "HKLM\\SOFTWARE\\Microsoft\\Windows NT\\CurrentVersion\\ProfileList";

/** A person's profile: the account's SID and the profile's folder (`C:\Users\ann`). */
export interface WindowsProfile {
  sid: string;
  folder: string;
}

/**
 * The people's profiles, and why some could not be placed (the list unreadable, a folder naming an
 * unset variable): a wipe then fails each `~/` path rather than leave a person's work unerased unsaid.
 */
export interface ProfileList {
  profiles: WindowsProfile[];
  problems: string[];
}

/** Environment variables as the process has them (`SystemDrive`, `SystemRoot`), named in any case. */
export type WindowsEnvironment = Readonly<Record<string, string | undefined>>;

const PERSON_SID = /^S-1-(5-21|12-1)(-\d+)+$/i;

/**
 * `text` with each `%NAME%` replaced by that variable (found without regard to case, as Windows does),
 * as ExpandEnvironmentStrings does for a REG_EXPAND_SZ value; `unset` names the variables left as they
 * were because they are not set.
 */
export function expandVariables(text: string, env: WindowsEnvironment): { text: string; unset: string[] } {
  const byName = new Map(Object.entries(env).map(([name, value]) => [name.toLowerCase(), value]));
  const unset: string[] = [];
  const expanded = text.replace(/%([^%]+)%/g, (whole, name: string) => {
    const value = byName.get(name.toLowerCase());
    if (value === undefined) {
      unset.push(whole);
      return whole;
    }
    return value;
  });
  return { text: expanded, unset };
}

/** Whether `path` is a full Windows path: a drive's (`C:\...`) or a share's (`\\server\share\...`). */
function isFullWindowsPath(path: string): boolean {
  return /^[A-Za-z]:\\/.test(path) || /^\\\\[^\\]+\\[^\\]+/.test(path);
}

/** The people's profiles in the output of `reg query PROFILE_LIST_KEY /s`, folders expanded with `env`. */
export function parseProfileList(output: string, env: WindowsEnvironment): ProfileList {
  return profilesOf(parseRegQuery(output), env);
}

/** The people's profiles among the keys of PROFILE_LIST_KEY's tree (as read by `reg query /s` or `reg export`). */
export function profilesOf(keys: Map<string, RegistryKey>, env: WindowsEnvironment): ProfileList {
  const parent = `${longKeyName(PROFILE_LIST_KEY).toLowerCase()}\\`;
  const profiles: WindowsProfile[] = [];
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const [name, key] of keys) {
    if (!name.toLowerCase().startsWith(parent)) continue;
    const subkey = name.slice(parent.length);
    const sid = subkey.replace(/\.bak$/i, "");
    if (subkey.includes("\\") || !PERSON_SID.test(sid)) continue;
    const image = valueNamed(key, "ProfileImagePath");
    // A key without a folder is an account that never had a profile here: nothing of it to erase.
    if (image === null || image.data.trim() === "") continue;
    const { text, unset } =
      image.type === "REG_EXPAND_SZ"
        ? expandVariables(image.data.trim(), env)
        : { text: image.data.trim(), unset: [] };
    if (unset.length > 0) {
      problems.push(
        `${subkey}: its profile folder ${image.data.trim()} names ${unset.join(", ")}, which is not set`,
      );
      continue;
    }
    if (!isFullWindowsPath(text)) {
      problems.push(`${subkey}: its profile folder ${text} is not a full path`);
      continue;
    }
    const normalized = win32.normalize(text);
    const folder = normalized.length > 3 ? normalized.replace(/\\+$/, "") : normalized;
    // A profile set aside (.bak) and its replacement may name the same folder: it is erased once.
    if (seen.has(folder.toLowerCase())) continue;
    seen.add(folder.toLowerCase());
    profiles.push({ sid, folder });
  }
  return { profiles, problems };
}

/**
 * Reads the people's profiles of this machine through `reg export` (run by `run`): a UTF-16 file, where
 * `reg query`'s output to a pipe is in the console's code page and would garble `C:\Users\Jürgen`.
 */
export async function readWindowsProfiles(run: ProgramRunner, env: WindowsEnvironment): Promise<ProfileList> {
  try {
    return profilesOf(await readRegistryTree(run, PROFILE_LIST_KEY), env);
  } catch (error) {
    return { profiles: [], problems: [`the profile list could not be read: ${(error as Error).message}`] };
  }
}
