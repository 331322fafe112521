/**
 * The macOS fact readers against outputs documented or recorded on real Macs (test/fixtures/macos,
 * README.md there cites each), and against a prepared root; `agent capture` of a Mac replayed.
 */
import { afterAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { captureFacts, factsFromCapture } from "../../src/agent/capture";
import type { ProgramResult, ProgramRunner } from "../../src/agent/facts/fact";
import { collectMacosFacts } from "../../src/agent/macos/collect";
import {
  readApplicationFirewall,
  readFileVault,
  readMacosTunnel,
  readMacosVersion,
  readScreenshotsBlocked,
} from "../../src/agent/macos/facts";
import { MACOS, platformUuidOf } from "../../src/agent/platform";
import { MachineTree } from "../../src/agent/root-path";

const FIXTURES = join(import.meta.dir, "../fixtures/macos");
const fixture = (name: string) => readFileSync(join(FIXTURES, name), "utf8");
const folders: string[] = [];
afterAll(() => {
  for (const folder of folders) rmSync(folder, { recursive: true, force: true });
});

/** A prepared Mac: ROOT with SystemVersion.plist, /etc/hosts and, when given, the tunnel's name file. */
function macRoot(files: Record<string, string> = {}): string {
  const root = mkdtempSync(join(tmpdir(), "bulwark-mac-"));
  folders.push(root);
  const all = {
    "System/Library/CoreServices/SystemVersion.plist": fixture("SystemVersion-14.plist"),
    "private/etc/hosts": "127.0.0.1\tlocalhost\n255.255.255.255\tbroadcasthost\n::1             localhost\n",
    ...files,
  };
  for (const [path, text] of Object.entries(all)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

/**
 * wireguard-go's socket for `utun` under ROOT, listening (until the file's tests end), of the same time as
 * the name file: what wg-quick takes for a tunnel that is up (macos/tunnel.ts).
 */
function listenAsWireguardGo(root: string, utun: string): void {
  const listener = Bun.listen({ unix: join(root, `var/run/wireguard/${utun}.sock`), socket: { data() {} } });
  const name = statSync(join(root, "var/run/wireguard/bulwark.name"));
  utimesSync(join(root, `var/run/wireguard/${utun}.sock`), name.atime, name.mtime);
  listeners.push(listener);
}
const listeners: { stop(closeActive?: boolean): void }[] = [];
afterAll(() => {
  for (const listener of listeners) listener.stop(true);
});

/** A runner answering each command line (joined by spaces) from `answers`; anything else is not installed. */
function runnerOf(answers: Record<string, Partial<ProgramResult>>): ProgramRunner & { calls: string[] } {
  const calls: string[] = [];
  const run = async (argv: string[]) => {
    const line = argv.join(" ");
    calls.push(line);
    const answer = answers[line];
    if (answer === undefined) return { code: 127, stdout: "", stderr: `${argv[0]}: not installed` };
    return { code: 0, stdout: "", stderr: "", ...answer };
  };
  return Object.assign(run, { calls });
}

test("os_version is ProductVersion of SystemVersion.plist under ROOT, with the build in the detail", async () => {
  const tree = await MachineTree.open(macRoot());
  expect(await readMacosVersion(tree)).toEqual({
    value: "14.4.1",
    detail: "macOS 14.4.1 (build 23E224), from /System/Library/CoreServices/SystemVersion.plist",
  });
  const monterey = await MachineTree.open(
    macRoot({ "System/Library/CoreServices/SystemVersion.plist": fixture("SystemVersion-12.plist") }),
  );
  expect((await readMacosVersion(monterey)).value).toBe("12.5");
  const broken = await MachineTree.open(
    macRoot({ "System/Library/CoreServices/SystemVersion.plist": "<plist><dict><key>ProductVersion</key>" }),
  );
  expect(await readMacosVersion(broken)).toEqual({
    detail: "/System/Library/CoreServices/SystemVersion.plist is not a plist: the plist ends early",
  });
  const emptyRoot = mkdtempSync(join(tmpdir(), "bulwark-mac-empty-"));
  folders.push(emptyRoot);
  expect((await readMacosVersion(await MachineTree.open(emptyRoot))).value).toBeUndefined();
});

test("disk_encrypted is fdesetup isactive: true exit 0, false exit 1, anything else unknown", async () => {
  const on = runnerOf({ "/usr/bin/fdesetup isactive": { stdout: fixture("fdesetup-isactive-on.txt") } });
  expect(await readFileVault(on)).toEqual({
    value: true,
    detail: "FileVault is on (fdesetup isactive: true)",
  });
  const off = runnerOf({
    "/usr/bin/fdesetup isactive": { code: 1, stdout: fixture("fdesetup-isactive-off.txt") },
  });
  expect((await readFileVault(off)).value).toBe(false);
  const odd = runnerOf({ "/usr/bin/fdesetup isactive": { code: 2, stderr: "Error: unable to determine" } });
  expect(await readFileVault(odd)).toEqual({
    detail: 'fdesetup isactive answered "Error: unable to determine" (exit 2): neither on nor off',
  });
  expect((await readFileVault(runnerOf({}))).value).toBeUndefined();
});

test("firewall_enabled reads socketfilterfw's State: 1 on, 2 block-all on, 0 off, other words unknown", async () => {
  const command = "/usr/libexec/ApplicationFirewall/socketfilterfw --getglobalstate";
  const read = (stdout: string) => readApplicationFirewall(runnerOf({ [command]: { stdout } }));
  expect((await read(fixture("socketfilterfw-enabled.txt"))).value).toBe(true);
  expect((await read(fixture("socketfilterfw-disabled.txt"))).value).toBe(false);
  expect(await read(fixture("socketfilterfw-block-all.txt"))).toEqual({
    value: true,
    detail: "the Application Firewall is on and blocks all incoming connections (State = 2)",
  });
  expect((await read("Firewall status unknown\n")).value).toBeUndefined();
});

test("vpn_connected: the utun in bulwark.name, then wg show's latest handshake within 180 s", async () => {
  const now = 1765099980 + 25;
  const root = macRoot({ "var/run/wireguard/bulwark.name": fixture("bulwark.name") });
  listenAsWireguardGo(root, "utun4");
  const tree = await MachineTree.open(root);
  const wg = runnerOf({
    "/opt/homebrew/bin/wg show utun4 latest-handshakes": { stdout: fixture("wg-latest-handshakes.txt") },
  });
  expect(await readMacosTunnel(tree, { isLive: true, runProgram: wg, nowSeconds: now })).toEqual({
    value: true,
    detail: "the bulwark tunnel (utun4) is up; its latest handshake was 25 s ago (at most 180 s counts)",
  });
  expect((await readMacosTunnel(tree, { isLive: true, runProgram: wg, nowSeconds: now + 300 })).value).toBe(
    false,
  );
  // Intel Macs: Homebrew in /usr/local.
  const intel = runnerOf({
    "/usr/local/bin/wg show utun4 latest-handshakes": { stdout: fixture("wg-latest-handshakes.txt") },
  });
  expect((await readMacosTunnel(tree, { isLive: true, runProgram: intel, nowSeconds: now })).value).toBe(
    true,
  );
  expect(intel.calls).toEqual([
    "/opt/homebrew/bin/wg show utun4 latest-handshakes",
    "/usr/local/bin/wg show utun4 latest-handshakes",
  ]);
  // wg cannot reach the utun the name file names (its wireguard-go went between the two readings): not connected.
  const stale = runnerOf({
    "/opt/homebrew/bin/wg show utun4 latest-handshakes": {
      code: 1,
      stderr: "Unable to access interface: No such file or directory",
    },
  });
  expect((await readMacosTunnel(tree, { isLive: true, runProgram: stale, nowSeconds: now })).value).toBe(
    false,
  );
  const none = await MachineTree.open(macRoot());
  expect(await readMacosTunnel(none, { isLive: true, runProgram: wg, nowSeconds: now })).toEqual({
    value: false,
    detail: "the bulwark tunnel is not up (no /var/run/wireguard/bulwark.name)",
  });
  // No wg at all: unknown, saying what to install.
  expect(
    (await readMacosTunnel(tree, { isLive: true, runProgram: runnerOf({}), nowSeconds: now })).detail,
  ).toContain("brew install wireguard-tools");
});

test("screenshots_blocked: true only when profiles lists the agent's profile at the computer level", async () => {
  const show = "/usr/bin/profiles show -type configuration";
  const installed = await readScreenshotsBlocked(
    runnerOf({ [show]: { stdout: fixture("profiles-show-installed.txt") } }),
  );
  expect(installed.value).toBe(true);
  expect(
    (await readScreenshotsBlocked(runnerOf({ [show]: { stdout: fixture("profiles-show-other.txt") } })))
      .value,
  ).toBe(false);
  expect(
    (await readScreenshotsBlocked(runnerOf({ [show]: { stdout: fixture("profiles-show-none.txt") } }))).value,
  ).toBe(false);
  const denied = runnerOf({ [show]: { code: 1, stderr: "profiles: this command requires root privileges" } });
  expect(await readScreenshotsBlocked(denied)).toEqual({
    detail:
      "profiles show -type configuration failed (exit 1): profiles: this command requires root privileges",
  });
});

test("every fact of a live Mac at once; USB known false and the screen lock unknown, each with why", async () => {
  const root = macRoot({ "var/run/wireguard/bulwark.name": "utun4\n" });
  listenAsWireguardGo(root, "utun4");
  const run = runnerOf({
    "/usr/bin/fdesetup isactive": { stdout: "true\n" },
    "/usr/libexec/ApplicationFirewall/socketfilterfw --getglobalstate": {
      stdout: fixture("socketfilterfw-enabled.txt"),
    },
    "/usr/bin/profiles show -type configuration": { stdout: fixture("profiles-show-none.txt") },
    "/opt/homebrew/bin/wg show utun4 latest-handshakes": { stdout: fixture("wg-latest-handshakes.txt") },
  });
  const collected = await collectMacosFacts(root, {
    isLive: true,
    runProgram: run,
    nowSeconds: () => 1765099990,
  });
  expect(collected.os_version).toBe("14.4.1");
  expect(collected.facts).toEqual({
    disk_encrypted: true,
    vpn_connected: true,
    usb_storage_blocked: false,
    usb_devices_blocked: false,
    screenshots_blocked: false,
    firewall_enabled: true,
  });
  expect(collected.notes.usb_storage_blocked).toContain("MDM-supervised Mac");
  expect(collected.notes.screen_lock_enabled).toContain("a root daemon cannot read");
  // Programs by absolute path only.
  expect(run.calls.every((call) => call.startsWith("/"))).toBe(true);
  // A prepared tree (not the live Mac): the programs' facts are left out, saying so.
  const copy = await collectMacosFacts(root, { runProgram: run, nowSeconds: () => 1765099990 });
  expect(copy.facts.disk_encrypted).toBeUndefined();
  expect(copy.notes.disk_encrypted).toBe(
    "FileVault's state is read on the live machine only (ROOT is not /)",
  );
});

test("the hardware id is IOPlatformUUID of ioreg's IOPlatformExpertDevice", () => {
  expect(platformUuidOf(fixture("ioreg-platform-expert.txt"))).toBe("3b8f6c2a-1d4e-5f70-8a9b-c0d1e2f3a4b5");
  expect(platformUuidOf("+-o Root  <class IORegistryEntry>")).toBeNull();
});

test("a Mac's capture records SystemVersion.plist and replays to the same facts", async () => {
  const root = macRoot();
  const folder = join(mkdtempSync(join(tmpdir(), "bulwark-mac-capture-")), "case");
  folders.push(join(folder, ".."));
  const captured = await captureFacts(root, folder, MACOS);
  const capture = JSON.parse(readFileSync(join(folder, "capture.json"), "utf8"));
  expect(capture.platform).toBe("macos");
  expect(capture.files).toContainEqual(
    expect.objectContaining({
      op: "readText",
      tree: "root",
      path: "/System/Library/CoreServices/SystemVersion.plist",
    }),
  );
  expect(capture.files).toContainEqual(
    expect.objectContaining({ op: "readText", tree: "live", path: "/var/run/wireguard/bulwark.name" }),
  );
  const replayed = await factsFromCapture(folder);
  expect(replayed.os_version).toBe("14.4.1");
  expect(replayed).toEqual(captured);
});

test("a recorded capture of a Mac (the fixture) replays to its facts on any machine", async () => {
  const replayed = await factsFromCapture(join(FIXTURES, "captures/macos14-filevault-on-tunnel-up"));
  expect(replayed.os_version).toBe("14.4.1");
  expect(replayed.facts).toEqual({
    disk_encrypted: true,
    vpn_connected: true,
    usb_storage_blocked: false,
    usb_devices_blocked: false,
    screenshots_blocked: true,
    firewall_enabled: true,
  });
});
