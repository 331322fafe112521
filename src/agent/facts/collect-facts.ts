import { type MachineReader, MachineTree } from "../root-path";
import { readDiskEncryption } from "./disk-encryption";
import { COLLECTOR_TIME_LIMIT_MS, type FactReading, type ProgramRunner, runProgram, unknown } from "./fact";
import { readFirewallEnabled } from "./firewall";
import { readOsVersion } from "./os-version";
import { readScreenLockEnabled } from "./screen-lock";
import { readUsbStorageBlocked } from "./usb-storage";
import { readUsbDevicesBlocked } from "./usbguard-daemon";
import { readVpnConnection } from "./vpn-connection";

/** The facts of the check-in (the server's `DeviceFacts`), in the order `agent facts` prints them. */
export const FACT_NAMES = [
  "disk_encrypted",
  "vpn_connected",
  "usb_storage_blocked",
  "usb_devices_blocked",
  "screenshots_blocked",
  "firewall_enabled",
  "screen_lock_enabled",
] as const;

export type FactName = (typeof FACT_NAMES)[number];

/** What the next check-in sends about the machine, and each reading's detail (which it does not send). */
export interface CollectedFacts {
  os_version?: string;
  facts: Partial<Record<FactName, boolean>>;
  /** For `os_version` and each fact: how it was read, or why it was left out. */
  notes: Partial<Record<FactName | "os_version", string>>;
}

export interface CollectOptions {
  /** Whether ROOT is the running machine, whose live state (`wg`, `nft`, `systemctl`) may be read; default: ROOT is `/`. */
  isLive?: boolean;
  runProgram?: ProgramRunner;
  /** The current time in seconds since the epoch. */
  nowSeconds?: () => number;
  timeLimitMs?: number;
  /**
   * Reads vpn_connected on the running system whatever ROOT is: `run` brings the tunnel up there (with
   * ROOT `/`, the same reading).
   */
  liveTunnel?: boolean;
  /** The machine's files as read (default: a MachineTree of ROOT); `agent capture` records through it. */
  tree?: MachineReader;
  /** The running machine's files, for the live tunnel (default: a MachineTree of `/`). */
  liveTree?: MachineReader;
}

/**
 * Reads every fact of the machine under `root` at once, each within its time limit: a collector that
 * fails or takes too long leaves out its fact only, with the reason in `notes`.
 */
export async function collectFacts(root: string, options: CollectOptions = {}): Promise<CollectedFacts> {
  const tree = options.tree ?? (await MachineTree.open(root));
  const live = {
    isLive: options.isLive ?? tree.isLiveSystem,
    runProgram: options.runProgram ?? runProgram,
    nowSeconds: (options.nowSeconds ?? (() => Math.floor(Date.now() / 1000)))(),
  };
  const limit = options.timeLimitMs ?? COLLECTOR_TIME_LIMIT_MS;
  const collectors: FactReaders = {
    os_version: () => readOsVersion(tree),
    disk_encrypted: () => readDiskEncryption(tree),
    vpn_connected: async () =>
      options.liveTunnel
        ? readVpnConnection(options.liveTree ?? (await MachineTree.open("/")), { ...live, isLive: true })
        : readVpnConnection(tree, live),
    usb_storage_blocked: () => readUsbStorageBlocked(tree, live),
    usb_devices_blocked: () => readUsbDevicesBlocked(tree, live),
    screenshots_blocked: async () => ({
      value: false,
      detail: "Linux has no control that blocks screenshots",
    }),
    firewall_enabled: () => readFirewallEnabled(tree, live),
    screen_lock_enabled: () => readScreenLockEnabled(tree),
  };
  return await readEach(collectors, limit);
}

/** A reader for `os_version` and one for each fact. */
export type FactReaders = Record<FactName | "os_version", () => Promise<FactReading<string | boolean>>>;

/**
 * Runs every reader at once, each within `limitMs`: one that fails or takes too long leaves out its
 * fact only, with the reason in `notes` (on every platform).
 */
export async function readEach(readers: FactReaders, limitMs: number): Promise<CollectedFacts> {
  const names = Object.keys(readers) as (FactName | "os_version")[];
  const readings = await Promise.all(names.map((name) => withinTimeLimit(readers[name], limitMs)));
  const collected: CollectedFacts = { facts: {}, notes: {} };
  names.forEach((name, index) => {
    const reading = readings[index] as FactReading<string | boolean>;
    collected.notes[name] = reading.detail;
    if (reading.value === undefined) return;
    if (name === "os_version") collected.os_version = reading.value as string;
    else collected.facts[name] = reading.value as boolean;
  });
  return collected;
}

/** The collector's reading, or why there is none: it threw, or took longer than `limitMs`. */
async function withinTimeLimit<T>(
  read: () => Promise<FactReading<T>>,
  limitMs: number,
): Promise<FactReading<T>> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<FactReading<T>>((resolve) => {
    timer = setTimeout(() => resolve(unknown(`not read within ${limitMs / 1000} s`)), limitMs);
  });
  const reading = read().catch((error: unknown) =>
    unknown<T>(`cannot be read: ${error instanceof Error ? error.message : String(error)}`),
  );
  try {
    return await Promise.race([reading, late]);
  } finally {
    clearTimeout(timer);
  }
}
