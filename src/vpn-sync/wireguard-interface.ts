/**
 * The WireGuard interface's peers, read and changed with wireguard-tools' `wg`. Only peers: the
 * interface's private key, listen port, addresses and routes are never read or written (`wg show`
 * of the public key and allowed IPs only; `wg set` naming peers only, which leaves the rest as it is,
 * where `wg syncconf` of a file without the [Interface] keys would clear the key and the port).
 */
import type { Peer } from "./peer-list";

/** `wg` failed: the interface is missing, or this user may not manage it. */
export class InterfaceError extends Error {}

/** What the interface holds now. */
export interface InterfacePeers {
  publicKey: string | null;
  /** Allowed IPs by peer public key, each list sorted. */
  peers: Map<string, string[]>;
}

/** The changes that make the interface's peers the list's. */
export interface PeerChanges {
  added: Peer[];
  /** Peers whose allowed IPs differ from the list's. */
  changed: Peer[];
  removed: string[];
}

/** Peers per `wg set` call: a long list stays far below the kernel's argument limit. */
const PEERS_PER_CALL = 200;

async function wg(args: string[]): Promise<string> {
  let child: ReturnType<typeof Bun.spawn>;
  try {
    child = Bun.spawn(["wg", ...args], { stdin: "ignore", stdout: "pipe", stderr: "pipe" });
  } catch (error) {
    throw new InterfaceError(`cannot run wg (${(error as Error).message}): install wireguard-tools`);
  }
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout as ReadableStream).text(),
    new Response(child.stderr as ReadableStream).text(),
    child.exited,
  ]);
  if (code !== 0) {
    const said = stderr.trim().split("\n")[0] || `exit ${code}`;
    throw new InterfaceError(`wg ${args.slice(0, 2).join(" ")}: ${said}`);
  }
  return stdout;
}

/** The interface's public key and its peers' allowed IPs. */
export async function readInterfacePeers(iface: string): Promise<InterfacePeers> {
  const publicKey = (await wg(["show", iface, "public-key"])).trim();
  const peers = new Map<string, string[]>();
  for (const line of (await wg(["show", iface, "allowed-ips"])).split("\n")) {
    const [key, networks = ""] = line.trim().split("\t");
    if (!key) continue;
    peers.set(key, networks === "(none)" ? [] : networks.split(/\s+/).filter(Boolean).sort());
  }
  return { publicKey: publicKey === "(none)" || publicKey === "" ? null : publicKey, peers };
}

/** What to add, change and remove so that the interface holds exactly `wanted`. */
export function peerChanges(wanted: readonly Peer[], current: InterfacePeers): PeerChanges {
  const changes: PeerChanges = { added: [], changed: [], removed: [] };
  const wantedKeys = new Set<string>();
  for (const peer of wanted) {
    wantedKeys.add(peer.publicKey);
    const held = current.peers.get(peer.publicKey);
    if (held === undefined) changes.added.push(peer);
    else if (held.join(" ") !== [...peer.allowedIps].sort().join(" ")) changes.changed.push(peer);
  }
  for (const key of current.peers.keys()) if (!wantedKeys.has(key)) changes.removed.push(key);
  return changes;
}

export function hasChanges(changes: PeerChanges): boolean {
  return changes.added.length + changes.changed.length + changes.removed.length > 0;
}

/**
 * Applies `changes` with `wg set IFACE peer KEY remove | peer KEY allowed-ips A,B`: removals first (a
 * retired device's address may already be a new device's), a peer's allowed IPs replaced as a whole.
 * Endpoints, handshakes and keepalives of the peers that stay are left alone.
 */
export async function applyPeerChanges(iface: string, changes: PeerChanges): Promise<void> {
  const steps = [
    ...changes.removed.map((key) => ["peer", key, "remove"]),
    ...[...changes.added, ...changes.changed].map((peer) => [
      "peer",
      peer.publicKey,
      "allowed-ips",
      peer.allowedIps.join(","),
    ]),
  ];
  for (let start = 0; start < steps.length; start += PEERS_PER_CALL)
    await wg(["set", iface, ...steps.slice(start, start + PEERS_PER_CALL).flat()]);
}

/**
 * Each peer's latest handshake (`wg show IFACE latest-handshakes`: the key, a tab, seconds since the
 * epoch; 0 for a peer that has had none), without the peers that have had none.
 */
export async function readLatestHandshakes(iface: string): Promise<Map<string, number>> {
  return parseLatestHandshakes(await wg(["show", iface, "latest-handshakes"]));
}

export function parseLatestHandshakes(output: string): Map<string, number> {
  const handshakes = new Map<string, number>();
  for (const line of output.split("\n")) {
    const [key, seconds] = line.trim().split("\t");
    const epoch = Number(seconds);
    if (key && Number.isSafeInteger(epoch) && epoch > 0) handshakes.set(key, epoch);
  }
  return handshakes;
}
