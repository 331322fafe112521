/**
 * What usbguard's daemon runs, asked over its IPC (`usbguard list-rules`), never inferred from a file:
 * rules written to /etc/usbguard/rules.d block nothing until the daemon has loaded them, and nothing at
 * all while it is stopped. The daemon is the running machine's, whatever ROOT is (as the tunnel is).
 */
import type { MachineReader } from "../root-path";
import { type FactReading, firstLine, known, type ProgramRunner } from "./fact";
import { USBGUARD_RULE_FILE } from "./usb-storage";

/** The daemon's rules in its order (without their ids), or why they cannot be had. */
export type DaemonRules = { rules: string[] } | { problem: string };

/** What to do when usbguard is installed but its daemon does not answer. */
export const USBGUARD_NOT_RUNNING = "usbguard is installed but not running: systemctl enable --now usbguard";

export async function readDaemonRules(run: ProgramRunner): Promise<DaemonRules> {
  const listed = await run(["usbguard", "list-rules"]);
  if (listed.code === 127) return { problem: "usbguard is not installed" };
  if (listed.code !== 0) {
    const said = firstLine(listed.stderr);
    return { problem: `${USBGUARD_NOT_RUNNING}${said ? ` (${said})` : ""}` };
  }
  const rules = listed.stdout
    .split("\n")
    .map((line) => line.trim().replace(/^\d+:\s*/, ""))
    .filter((line) => line !== "");
  return { rules };
}

/** The rules of a usbguard rule file, without comments and blank lines, white space folded. */
export function ruleLines(text: string): string[] {
  return text
    .split("\n")
    .map((line) => line.trim().replace(/\s+/g, " "))
    .filter((line) => line !== "" && !line.startsWith("#"));
}

/** Whether the daemon runs `ours` (the agent's rules, ending in `block`) as one run, in order. */
export function runsRules(daemon: readonly string[], ours: readonly string[]): boolean {
  if (ours.length === 0 || ours.at(-1) !== "block") return false;
  const folded = daemon.map((rule) => rule.replace(/\s+/g, " "));
  for (let start = 0; start + ours.length <= folded.length; start++)
    if (ours.every((rule, index) => folded[start + index] === rule)) return true;
  return false;
}

/**
 * `usb_devices_blocked`: the agent's usbguard rules (ending in `block`) are written and usbguard's
 * daemon runs them, as it lists them.
 */
export async function readUsbDevicesBlocked(
  tree: MachineReader,
  live: { runProgram: ProgramRunner },
): Promise<FactReading<boolean>> {
  const file = await tree.readText(USBGUARD_RULE_FILE);
  const ours = file === null ? [] : ruleLines(file);
  if (ours.at(-1) !== "block")
    return known(false, `${USBGUARD_RULE_FILE} is not written: nothing blocks USB devices`);
  const daemon = await readDaemonRules(live.runProgram);
  if ("problem" in daemon) return known(false, `${daemon.problem}, so nothing blocks USB devices`);
  if (!runsRules(daemon.rules, ours))
    return known(
      false,
      `usbguard runs without the agent's rules from ${USBGUARD_RULE_FILE} (restart it: systemctl restart usbguard; its RuleFolder must be /etc/usbguard/rules.d)`,
    );
  return known(true, `usbguard's daemon runs the agent's ${ours.length} rules, ending in block`);
}
