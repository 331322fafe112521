import type { MachineReader } from "../root-path";
import { type FactReading, known, type ProgramRunner, unknown } from "./fact";

/** The agent's modprobe rule (written by its enforcement of `storage.external_storage_allowed`). */
export const MODPROBE_RULE_FILE = "/etc/modprobe.d/bulwark.conf";

/** The agent's usbguard rules (written by its enforcement of `usb.allowed`). */
export const USBGUARD_RULE_FILE = "/etc/usbguard/rules.d/50-bulwark.conf";

/** The kernel modules that drive USB mass storage, as /sys/module names them. */
const STORAGE_MODULES = ["usb_storage", "uas"];

/**
 * `usb_storage_blocked`: the agent's storage rule is in force. Either its modprobe rule (`install
 * usb-storage /bin/false`, `install uas /bin/false`) is written and neither module is loaded (a loaded
 * module keeps working until it is unloaded or the machine restarts), or its usbguard rules end in `block`,
 * allow no storage class (08), and usbguard runs (`systemctl is-active`, on the live machine only).
 */
export async function readUsbStorageBlocked(
  tree: MachineReader,
  live: { isLive: boolean; runProgram: ProgramRunner },
): Promise<FactReading<boolean>> {
  const why: string[] = [];
  const modprobe = await tree.readText(MODPROBE_RULE_FILE);
  if (modprobe !== null && STORAGE_MODULES.every((module) => installsFalse(modprobe, module))) {
    const loaded: string[] = [];
    for (const module of STORAGE_MODULES) if (await tree.exists(`/sys/module/${module}`)) loaded.push(module);
    if (loaded.length === 0)
      return known(true, `${MODPROBE_RULE_FILE} blocks usb-storage and uas, neither is loaded`);
    why.push(`${MODPROBE_RULE_FILE} blocks usb-storage and uas, but ${loaded.join(" and ")} is loaded`);
  } else why.push(`${MODPROBE_RULE_FILE} does not block usb-storage and uas`);

  const usbguard = await tree.readText(USBGUARD_RULE_FILE);
  if (usbguard === null || !blocksStorage(usbguard)) {
    why.push(`${USBGUARD_RULE_FILE} does not block storage`);
    return known(false, why.join("; "));
  }
  const isInstalled =
    (await tree.exists("/usr/sbin/usbguard-daemon")) || (await tree.exists("/usr/bin/usbguard-daemon"));
  if (!isInstalled) {
    why.push(`${USBGUARD_RULE_FILE} blocks storage, but usbguard is not installed`);
    return known(false, why.join("; "));
  }
  if (!live.isLive)
    return unknown(
      `${USBGUARD_RULE_FILE} blocks storage; whether usbguard runs is read on the live machine only`,
    );
  const active = await live.runProgram(["systemctl", "is-active", "usbguard"]);
  const state = active.stdout.trim();
  if (state === "active") return known(true, `${USBGUARD_RULE_FILE} blocks storage and usbguard is active`);
  if (active.code === 127 || state === "")
    return unknown(`${USBGUARD_RULE_FILE} blocks storage; systemctl cannot tell whether usbguard runs`);
  why.push(`${USBGUARD_RULE_FILE} blocks storage, but usbguard is ${state}`);
  return known(false, why.join("; "));
}

/** Whether a modprobe.d(5) text holds `install MODULE /bin/false` (`-` and `_` are the same in names). */
function installsFalse(text: string, module: string): boolean {
  return meaningfulLines(text).some((line) => {
    const [command, name, ...program] = line.split(/\s+/);
    return (
      command === "install" && name?.replaceAll("-", "_") === module && program.join(" ") === "/bin/false"
    );
  });
}

/** Whether usbguard rules end in `block` and allow no mass-storage interface (class 08). */
function blocksStorage(text: string): boolean {
  const rules = meaningfulLines(text);
  return rules.at(-1) === "block" && !rules.some((rule) => /^allow\b.*\b08:/.test(rule));
}

function meaningfulLines(text: string): string[] {
  return text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line !== "" && !line.startsWith("#"));
}
