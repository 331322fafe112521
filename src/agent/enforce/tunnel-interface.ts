/**
 * The tunnel's interface in the running kernel, and whether this enrollment brought it up: the agent
 * takes down, restarts or reconfigures only the interface it made, never another of the same name.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { MachineState } from "./plan";
import { LIVE_INTERFACES, TUNNEL_INTERFACE } from "./settings";

/**
 * A network interface as the kernel knows it: its index, which the kernel does not give again to another
 * interface before it restarts, and the boot it belongs to. The agent records the tunnel's after
 * `wg-quick up` (status.json), so that it never takes down an interface of that name it did not make.
 */
export interface InterfaceIdentity {
  ifindex: number;
  boot_id: string;
}

/** This boot of the running kernel (proc(5)); an interface index means nothing across boots. */
const BOOT_ID = "/proc/sys/kernel/random/boot_id";

function readTrimmed(path: string): string | null {
  try {
    return readFileSync(path, "utf8").trim();
  } catch {
    return null;
  }
}

/** The tunnel's interface in `interfaces` (the running kernel's, unless a test gives another), or null. */
export function tunnelInterface(interfaces = LIVE_INTERFACES): InterfaceIdentity | null {
  const folder = join(interfaces, TUNNEL_INTERFACE);
  if (!existsSync(folder)) return null;
  return {
    ifindex: Number.parseInt(readTrimmed(join(folder, "ifindex")) ?? "", 10),
    boot_id: readTrimmed(BOOT_ID) ?? "",
  };
}

/**
 * Whether the tunnel's interface is absent, the one this enrollment brought up (`broughtUp`, from its
 * status.json), or another of the same name (an administrator's, another enrollment's).
 */
export function tunnelOwnership(
  broughtUp: InterfaceIdentity | null,
  interfaces = LIVE_INTERFACES,
): MachineState["tunnel"] {
  const found = tunnelInterface(interfaces);
  if (found === null) return "absent";
  const isOurs =
    broughtUp !== null &&
    Number.isInteger(found.ifindex) &&
    found.ifindex === broughtUp.ifindex &&
    found.boot_id === broughtUp.boot_id;
  return isOurs ? "ours" : "other";
}

/** The line said when an interface of the tunnel's name is there but the agent did not bring it up. */
export const OTHER_TUNNEL_INTERFACE = `an interface named ${TUNNEL_INTERFACE} exists that this agent did not bring up`;
