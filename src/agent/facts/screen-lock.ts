import type { MachineReader } from "../root-path";
import { type FactReading, known, unknown } from "./fact";

/** The system dconf databases' keyfile folders (dconf(7)): `/etc/dconf/db/NAME.d/`. */
const DCONF_DB = "/etc/dconf/db";
const LOCK_ENABLED = "/org/gnome/desktop/screensaver/lock-enabled";
const IDLE_DELAY = "/org/gnome/desktop/session/idle-delay";

/**
 * `screen_lock_enabled`: only what an administrator fixed for every user, a system dconf setting of
 * GNOME's `lock-enabled` that is locked (`locks/`), so no user can turn it off: true when it is `true` and
 * the idle delay is not locked at 0 (then the screen never locks by itself). Per-user settings are not
 * read: without a lock the fact is left out.
 */
export async function readScreenLockEnabled(tree: MachineReader): Promise<FactReading<boolean>> {
  const values = new Map<string, string>();
  const locked = new Set<string>();
  for (const database of ((await tree.list(DCONF_DB)) ?? []).filter((name) => name.endsWith(".d"))) {
    const folder = `${DCONF_DB}/${database}`;
    for (const file of (await tree.list(folder)) ?? []) {
      if (file === "locks") continue;
      for (const [key, value] of parseKeyfile(
        (await tree.readText(`${folder}/${file}`).catch(() => null)) ?? "",
      ))
        values.set(key, value);
    }
    for (const file of (await tree.list(`${folder}/locks`)) ?? [])
      for (const line of ((await tree.readText(`${folder}/locks/${file}`)) ?? "").split("\n"))
        if (line.trim().startsWith("/")) locked.add(line.trim());
  }
  const enabled = values.get(LOCK_ENABLED);
  if (!locked.has(LOCK_ENABLED) || enabled === undefined)
    return unknown(`no system dconf setting locks ${LOCK_ENABLED} (each user's own setting is not read)`);
  if (enabled !== "true") return known(false, `the system dconf locks ${LOCK_ENABLED} to ${enabled}`);
  const delay = values.get(IDLE_DELAY);
  if (locked.has(IDLE_DELAY) && delay !== undefined && /^(uint32\s+)?0$/.test(delay))
    return known(false, `the system dconf locks ${IDLE_DELAY} to 0: the screen never locks by itself`);
  return known(true, `the system dconf locks ${LOCK_ENABLED} to true`);
}

/** The `/group/key` -> value pairs of a dconf keyfile (`[org/gnome/desktop/screensaver]`, `key=value`). */
function parseKeyfile(text: string): Map<string, string> {
  const pairs = new Map<string, string>();
  let group = "";
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    const header = /^\[(.+)\]$/.exec(line);
    if (header) group = (header[1] as string).replace(/^\/|\/$/g, "");
    const pair = /^([A-Za-z0-9-]+)\s*=\s*(.*)$/.exec(line);
    if (pair && group) pairs.set(`/${group}/${pair[1]}`, (pair[2] as string).trim());
  }
  return pairs;
}
