/**
 * Every fact of a Mac at once, each within its time limit, as collect-facts.ts does on Linux: a reader
 * that fails or takes too long leaves out its fact only, with the reason.
 */
import { type CollectedFacts, type CollectOptions, type FactReaders, readEach } from "../facts/collect-facts";
import { COLLECTOR_TIME_LIMIT_MS, known, runProgram } from "../facts/fact";
import { MachineTree } from "../root-path";
import {
  MACOS_USB_REASON,
  readApplicationFirewall,
  readFileVault,
  readMacosScreenLock,
  readMacosTunnel,
  readMacosVersion,
  readScreenshotsBlocked,
} from "./facts";

export async function collectMacosFacts(root: string, options: CollectOptions = {}): Promise<CollectedFacts> {
  const tree = options.tree ?? (await MachineTree.open(root));
  const run = options.runProgram ?? runProgram;
  const isLive = options.isLive ?? tree.isLiveSystem;
  const live = {
    isLive,
    runProgram: run,
    nowSeconds: (options.nowSeconds ?? (() => Math.floor(Date.now() / 1000)))(),
  };
  // The programs (fdesetup, socketfilterfw, profiles) tell the running Mac's state, whatever ROOT is.
  const onlyLive = <T>(read: () => Promise<T>, what: string) =>
    isLive ? read() : Promise.resolve({ detail: `${what} is read on the live machine only (ROOT is not /)` });
  const collectors: FactReaders = {
    os_version: () => readMacosVersion(tree),
    disk_encrypted: () => onlyLive(() => readFileVault(run), "FileVault's state"),
    vpn_connected: async () =>
      options.liveTunnel
        ? readMacosTunnel(options.liveTree ?? (await MachineTree.open("/")), { ...live, isLive: true })
        : readMacosTunnel(tree, live),
    usb_storage_blocked: async () => known(false, MACOS_USB_REASON),
    usb_devices_blocked: async () => known(false, MACOS_USB_REASON),
    screenshots_blocked: () => onlyLive(() => readScreenshotsBlocked(run), "the restrictions profile"),
    firewall_enabled: () => onlyLive(() => readApplicationFirewall(run), "the Application Firewall's state"),
    screen_lock_enabled: () => readMacosScreenLock(),
  };
  return await readEach(collectors, options.timeLimitMs ?? COLLECTOR_TIME_LIMIT_MS * 2);
}
