import type { MachineReader } from "../root-path";
import { type FactReading, firstLine, known, type ProgramRunner, unknown } from "./fact";

/** The agent's WireGuard interface. */
export const TUNNEL_INTERFACE = "bulwark";

/** A handshake older than this means the tunnel is not carrying traffic (WireGuard re-keys every 2 min). */
export const HANDSHAKE_MAX_AGE_SECONDS = 180;

/**
 * The newest handshake in `wg show INTERFACE latest-handshakes` (a peer's key, then seconds since the
 * epoch, per line), in seconds since the epoch; 0 when there has been none. wg.exe prints the same.
 */
export function latestHandshake(output: string): number {
  return Math.max(
    0,
    ...output
      .split("\n")
      .map((line) => Number(line.trim().split(/\s+/)[1]))
      .filter((seconds) => Number.isInteger(seconds)),
  );
}

/** IFF_UP in an interface's `flags` (linux/if.h). */
const IFF_UP = 0x1;

/**
 * `vpn_connected`: the `bulwark` interface exists, is up, and its latest handshake (`wg show bulwark
 * latest-handshakes`) is at most 180 s old. No interface, or one that is down: false. The handshake is
 * state of the running kernel (or wireguard-go), so it is read on the live machine only.
 */
export async function readVpnConnection(
  tree: MachineReader,
  live: { isLive: boolean; runProgram: ProgramRunner; nowSeconds: number },
): Promise<FactReading<boolean>> {
  const folder = `/sys/class/net/${TUNNEL_INTERFACE}`;
  if (!(await tree.exists(folder))) return known(false, `there is no ${TUNNEL_INTERFACE} interface`);
  const flags = Number.parseInt((await tree.readText(`${folder}/flags`)) ?? "", 16);
  if (Number.isNaN(flags)) return unknown(`${folder}/flags cannot be read`);
  // A WireGuard interface that is up reports operstate "unknown" (it has no carrier): only "down" counts.
  const operstate = (await tree.readText(`${folder}/operstate`))?.trim();
  if ((flags & IFF_UP) === 0 || operstate === "down")
    return known(false, `the ${TUNNEL_INTERFACE} interface is down`);
  if (!live.isLive)
    return unknown(
      `the ${TUNNEL_INTERFACE} interface is up; its handshakes are read with wg on the live machine only`,
    );
  const shown = await live.runProgram(["wg", "show", TUNNEL_INTERFACE, "latest-handshakes"]);
  if (shown.code !== 0)
    return unknown(`wg show ${TUNNEL_INTERFACE} latest-handshakes failed: ${firstLine(shown.stderr)}`);
  const latest = latestHandshake(shown.stdout);
  if (latest === 0) return known(false, `the ${TUNNEL_INTERFACE} interface is up with no handshake yet`);
  const age = live.nowSeconds - latest;
  return known(
    age <= HANDSHAKE_MAX_AGE_SECONDS,
    `the ${TUNNEL_INTERFACE} interface is up; its latest handshake was ${age} s ago (at most ${HANDSHAKE_MAX_AGE_SECONDS} s counts)`,
  );
}
