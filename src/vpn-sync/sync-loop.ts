/**
 * `bulwark vpn sync`: keeps a WireGuard interface's peers equal to the server's peer list. Each cycle
 * asks the server whether the list changed (If-None-Match: a 304 costs nothing here), reads the
 * interface's peers (so that an interface brought up again from an old file is put right too) and
 * applies the difference, then reports the peers' new handshakes (what makes a phone without an agent
 * online on the server). While the server is away or refuses, the interface keeps the peers it has and
 * the next try backs off, 1 s doubling to 60 s with jitter.
 */
import {
  fetchPeerList,
  type Peer,
  type PeerList,
  ServerRefusal,
  ServerUnreachable,
  reportHandshakes as sendHandshakes,
} from "./peer-list";
import {
  applyPeerChanges,
  hasChanges,
  InterfaceError,
  type PeerChanges,
  peerChanges,
  readInterfacePeers,
  readLatestHandshakes,
} from "./wireguard-interface";

export interface VpnSyncOptions {
  /** The server's base URL, without a trailing slash. */
  server: string;
  /** One API key per organization whose devices use this VPN server, each with the vpn:read scope. */
  apiKeys: readonly string[];
  iface: string;
  intervalSeconds: number;
  /** One cycle, then return (or throw VpnSyncFailure). */
  isOnce: boolean;
  /** A PEM that verifies the server's TLS certificate when the system's store does not. */
  ca: string | null;
  /** Ends the loop (SIGTERM) at its next wait. */
  signal?: AbortSignal;
  log?: (line: string) => void;
  random?: () => number;
}

/** One cycle failed (--once): the line to say. */
export class VpnSyncFailure extends Error {}

/** The longest wait between two failed tries, before its jitter. */
export const MAX_BACKOFF_SECONDS = 60;

/**
 * Seconds until the next try after `failures` failed cycles in a row (1 for the first): 1 s doubling to
 * 60 s, each drawn between three quarters of that and all of it, so that VPN hosts started together do
 * not come back together. A Retry-After from the server is the least wait.
 */
export function backoffDelay(
  failures: number,
  retryAfterSeconds: number | null = null,
  random: () => number = Math.random,
): number {
  const capped = Math.min(MAX_BACKOFF_SECONDS, 2 ** Math.max(0, failures - 1));
  const jittered = capped * (0.75 + 0.25 * random());
  return retryAfterSeconds === null ? jittered : Math.max(jittered, retryAfterSeconds);
}

/** What the loop remembers between cycles. */
interface SyncState {
  /** Each key's last list, for If-None-Match. */
  lists: (PeerList | null)[];
  /** Every peer's label seen in a list, to name the removed ones. */
  labels: Map<string, string>;
  /** The peers the interface held at the last read. */
  peerCount: number | null;
  /** The last public-key mismatch said, so that it is said once. */
  keyWarning: string | null;
  hasSucceeded: boolean;
  /** Each peer's handshake as last reported, so that only newer ones are sent. */
  reported: Map<string, number>;
  /** The keys (by index) whose handshake report was refused, with the line said for it. */
  reportRefusals: Map<number, string>;
}

/** Up to ten names of a list, then how many more. */
function names(items: string[]): string {
  const shown = items.slice(0, 10).join(", ");
  return items.length > 10 ? `${shown} and ${items.length - 10} more` : shown;
}

function plural(count: number, word: string): string {
  return `${count} ${word}${count === 1 ? "" : "s"}`;
}

/** The one log line of a change: who was added, changed and removed, and how many peers there are now. */
function describeChanges(iface: string, changes: PeerChanges, labels: Map<string, string>, total: number) {
  const describe = (peer: Peer) => `${peer.label} ${peer.allowedIps.join(",")}`;
  const parts = [
    changes.added.length > 0 &&
      `added ${plural(changes.added.length, "peer")} (${names(changes.added.map(describe))})`,
    changes.changed.length > 0 &&
      `changed the allowed IPs of ${plural(changes.changed.length, "peer")} (${names(changes.changed.map(describe))})`,
    changes.removed.length > 0 &&
      `removed ${plural(changes.removed.length, "peer")} (${names(
        changes.removed.map((key) => labels.get(key) ?? `peer ${key}`),
      )})`,
  ].filter(Boolean);
  return `${iface}: ${parts.join("; ")}; ${plural(total, "peer")} now`;
}

/** Fetches every key's list, then makes the interface's peers their union. */
async function syncOnce(options: VpnSyncOptions, state: SyncState, log: (line: string) => void) {
  const lists: PeerList[] = [];
  for (const [index, apiKey] of options.apiKeys.entries())
    lists.push(
      await fetchPeerList(options.server, apiKey, state.lists[index] ?? null, options.ca, options.signal),
    );
  state.lists = lists;
  const wanted = new Map<string, Peer>();
  for (const list of lists)
    for (const peer of list.peers) {
      wanted.set(peer.publicKey, peer);
      state.labels.set(peer.publicKey, peer.label);
    }

  const current = await readInterfacePeers(options.iface);
  const serverKeys = [...new Set(lists.map((list) => list.serverPublicKey))];
  const keyWarning =
    current.publicKey !== null && !serverKeys.includes(current.publicKey)
      ? `${options.iface}'s public key ${current.publicKey} is not the one devices expect (${serverKeys.join(", ")}): their tunnels cannot come up until this server has that key (bulwark vpn server-config on the Bulwark host prints it); this sync never changes the interface's own key`
      : null;
  if (keyWarning !== null && keyWarning !== state.keyWarning) log(keyWarning);
  if (keyWarning === null && state.keyWarning !== null)
    log(`${options.iface}'s public key is the one devices expect again`);
  state.keyWarning = keyWarning;

  const changes = peerChanges([...wanted.values()], current);
  if (hasChanges(changes)) {
    await applyPeerChanges(options.iface, changes);
    log(describeChanges(options.iface, changes, state.labels, wanted.size));
  } else if (!state.hasSucceeded) {
    log(`${options.iface}: in sync, ${plural(wanted.size, "peer")}`);
  }
  state.peerCount = wanted.size;
  state.hasSucceeded = true;
  await reportNewHandshakes(options, state, lists, log);
}

/**
 * Sends each key's server the handshakes of its peers that are newer than last sent. A key without the
 * vpn:report scope is said once and skipped from then on (its peers still sync); a server that does not
 * take them now is tried again at the next cycle. Never fails the cycle: the peers are what it is for.
 */
async function reportNewHandshakes(
  options: VpnSyncOptions,
  state: SyncState,
  lists: PeerList[],
  log: (line: string) => void,
) {
  let handshakes: Map<string, number>;
  try {
    handshakes = await readLatestHandshakes(options.iface);
  } catch {
    return; // read again at the next cycle
  }
  for (const [index, list] of lists.entries()) {
    if (state.reportRefusals.has(index)) continue;
    const fresh = list.peers
      .map((peer) => ({ publicKey: peer.publicKey, epochSeconds: handshakes.get(peer.publicKey) ?? 0 }))
      .filter((peer) => peer.epochSeconds > (state.reported.get(peer.publicKey) ?? 0));
    if (fresh.length === 0) continue;
    const apiKey = options.apiKeys[index] ?? "";
    try {
      for (let start = 0; start < fresh.length; start += 10_000)
        await sendHandshakes(
          options.server,
          apiKey,
          fresh.slice(start, start + 10_000),
          options.ca,
          options.signal,
        );
      for (const peer of fresh) state.reported.set(peer.publicKey, peer.epochSeconds);
    } catch (error) {
      if (!(error instanceof ServerRefusal || error instanceof ServerUnreachable)) throw error;
      if (error instanceof ServerRefusal && error.status === 403) {
        const line = `API key ${index + 1} lacks the vpn:report scope: the handshakes of its peers are not reported, so phones without an agent stay pending (give the key vpn:report to report them)`;
        state.reportRefusals.set(index, line);
        log(line);
      }
    }
  }
}

/** Resolves after `seconds`, or at once when `signal` aborts. */
function pause(seconds: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, seconds * 1000);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}

/**
 * Runs the sync until `signal` aborts (or for one cycle with `isOnce`). Logs a line when it starts,
 * for each change of the interface's peers, each failed try (with the wait before the next), and when
 * the server answers again.
 */
export async function runVpnSync(options: VpnSyncOptions): Promise<void> {
  const log = options.log ?? ((line: string) => console.error(`${new Date().toISOString()} ${line}`));
  const random = options.random ?? Math.random;
  const state: SyncState = {
    lists: [],
    labels: new Map(),
    peerCount: null,
    keyWarning: null,
    hasSucceeded: false,
    reported: new Map(),
    reportRefusals: new Map(),
  };
  const target = new URL(options.server);
  if (target.protocol === "http:" && !/^(localhost|127\.\d+\.\d+\.\d+|\[::1\])$/.test(target.hostname))
    log(`warning: the API key goes to ${target.host} over plain http: use https`);
  if (!options.isOnce)
    log(
      `keeping ${options.iface}'s peers equal to ${options.server}'s list (${plural(options.apiKeys.length, "API key")}), checking every ${options.intervalSeconds} s`,
    );
  let failures = 0;
  while (!options.signal?.aborted) {
    try {
      await syncOnce(options, state, log);
      if (failures > 0)
        log(`${options.server} answers again after ${failures} failed ${failures === 1 ? "try" : "tries"}`);
      failures = 0;
      if (options.isOnce) return;
      await pause(options.intervalSeconds * (0.9 + 0.2 * random()), options.signal);
    } catch (error) {
      const isExpected =
        error instanceof ServerUnreachable ||
        error instanceof ServerRefusal ||
        error instanceof InterfaceError;
      if (!isExpected) throw error;
      // Stopped during a request: nothing failed.
      if (options.signal?.aborted) return;
      if (options.isOnce) throw new VpnSyncFailure(error.message);
      failures++;
      const retryAfter = error instanceof ServerRefusal ? error.retryAfterSeconds : null;
      const delay = backoffDelay(failures, retryAfter, random);
      const kept =
        state.peerCount === null ? "" : `; ${options.iface} keeps its ${plural(state.peerCount, "peer")}`;
      log(`${error.message}${kept}; trying again in ${delay.toFixed(1)} s`);
      await pause(delay, options.signal);
    }
  }
}
