/**
 * Every fact of a Windows machine at once, each within its time limit, as collect-facts.ts does on
 * Linux: a reader that fails or takes too long leaves out its fact only, with the reason.
 */
import { type CollectedFacts, type CollectOptions, type FactReaders, readEach } from "../facts/collect-facts";
import { known, runProgram } from "../facts/fact";
import {
  readBitLocker,
  readWindowsFirewall,
  readWindowsScreenLock,
  readWindowsTunnel,
  readWindowsUsbDevices,
  readWindowsUsbStorage,
  readWindowsVersion,
} from "./facts";

/**
 * How long one Windows reader may take: PowerShell alone needs a second or two to start on a laptop, so
 * the Linux limit (2 s) would leave BitLocker out on a busy machine.
 */
export const WINDOWS_TIME_LIMIT_MS = 10_000;

export async function collectWindowsFacts(options: CollectOptions = {}): Promise<CollectedFacts> {
  const run = options.runProgram ?? runProgram;
  const nowSeconds = (options.nowSeconds ?? (() => Math.floor(Date.now() / 1000)))();
  const limit = options.timeLimitMs ?? WINDOWS_TIME_LIMIT_MS;
  const collectors: FactReaders = {
    os_version: () => readWindowsVersion(run),
    disk_encrypted: () => readBitLocker(run, process.env.SystemDrive ?? "C:"),
    vpn_connected: () => readWindowsTunnel(run, nowSeconds),
    usb_storage_blocked: () => readWindowsUsbStorage(run),
    usb_devices_blocked: () => readWindowsUsbDevices(run),
    screenshots_blocked: async () =>
      known(false, "Windows has no control a service can set that blocks screenshots"),
    firewall_enabled: () => readWindowsFirewall(run),
    screen_lock_enabled: () => readWindowsScreenLock(run),
  };
  return await readEach(collectors, limit);
}
