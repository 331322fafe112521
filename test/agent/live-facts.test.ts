/** vpn_connected, usb_storage_blocked, firewall_enabled and screen_lock_enabled on prepared machines. */
import { afterAll, describe, expect, test } from "bun:test";
import type { ProgramRunner } from "../../src/agent/facts/fact";
import { readFirewallEnabled } from "../../src/agent/facts/firewall";
import { readScreenLockEnabled } from "../../src/agent/facts/screen-lock";
import { readUsbStorageBlocked } from "../../src/agent/facts/usb-storage";
import { readVpnConnection } from "../../src/agent/facts/vpn-connection";
import { MachineTree } from "../../src/agent/root-path";
import { buildMachine, type MachinePart, removeMachines, USB_STORAGE } from "../helpers/agent-machine";

afterAll(removeMachines);

const tree = async (...parts: MachinePart[]) =>
  MachineTree.open(buildMachine({ folders: ["etc"] }, ...parts));

/** A live machine whose programs print what `outputs` says (by their first two words), and record their calls. */
function programs(outputs: Record<string, { code?: number; stdout?: string; stderr?: string }>) {
  const calls: string[][] = [];
  const run: ProgramRunner = async (argv) => {
    calls.push(argv);
    const output = outputs[argv.slice(0, 2).join(" ")] ?? { code: 127, stderr: `${argv[0]}: not installed` };
    return { code: output.code ?? 0, stdout: output.stdout ?? "", stderr: output.stderr ?? "" };
  };
  return { calls, run };
}

const NOW = 1_750_000_000;
const tunnel = (flags: string, operstate = "unknown"): MachinePart => ({
  files: {
    "sys/devices/virtual/net/bulwark/flags": `${flags}\n`,
    "sys/devices/virtual/net/bulwark/operstate": `${operstate}\n`,
  },
  links: { "sys/class/net/bulwark": "../../devices/virtual/net/bulwark" },
});
const handshakes = (seconds: number) => ({
  "wg show": { stdout: `xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg=\t${seconds}\n` },
});

describe("vpn_connected", () => {
  test("no bulwark interface: false; an interface that is down: false", async () => {
    const live = { isLive: true, runProgram: programs({}).run, nowSeconds: NOW };
    expect((await readVpnConnection(await tree(), live)).value).toBe(false);
    expect(await readVpnConnection(await tree(tunnel("0x1090")), live)).toEqual({
      value: false,
      detail: "the bulwark interface is down",
    });
  });

  test("up with a handshake at most 180 s old: true; older, or none yet: false", async () => {
    const up = await tree(tunnel("0x1091"));
    const at = async (outputs: Parameters<typeof programs>[0]) =>
      (await readVpnConnection(up, { isLive: true, runProgram: programs(outputs).run, nowSeconds: NOW }))
        .value;
    expect(await at(handshakes(NOW - 180))).toBe(true);
    expect(await at(handshakes(NOW - 181))).toBe(false);
    expect(await at(handshakes(0))).toBe(false);
  });

  test("no way to read the handshake (another root, wg failing): left out", async () => {
    const up = await tree(tunnel("0x1091"));
    const wg = programs(handshakes(NOW));
    expect(
      (await readVpnConnection(up, { isLive: false, runProgram: wg.run, nowSeconds: NOW })).value,
    ).toBeUndefined();
    expect(wg.calls).toEqual([]);
    const failing = programs({
      "wg show": { code: 1, stderr: "Unable to access interface: Operation not permitted\n" },
    });
    expect(await readVpnConnection(up, { isLive: true, runProgram: failing.run, nowSeconds: NOW })).toEqual({
      detail: "wg show bulwark latest-handshakes failed: Unable to access interface: Operation not permitted",
    });
  });
});

describe("usb_storage_blocked", () => {
  const offline = { isLive: false, runProgram: programs({}).run };

  test("the modprobe rule with usb_storage not loaded: true; loaded: false; no rule: false", async () => {
    expect((await readUsbStorageBlocked(await tree(USB_STORAGE.rule), offline)).value).toBe(true);
    const loaded = await readUsbStorageBlocked(
      await tree(USB_STORAGE.rule, USB_STORAGE.moduleLoaded),
      offline,
    );
    expect(loaded.value).toBe(false);
    expect(loaded.detail).toContain("but usb_storage is loaded");
    expect((await readUsbStorageBlocked(await tree(), offline)).value).toBe(false);
  });

  test("a rule for usb-storage only is not the agent's rule (uas drives the same disks)", async () => {
    const half = { files: { "etc/modprobe.d/bulwark.conf": "install usb_storage /bin/false\n" } };
    expect((await readUsbStorageBlocked(await tree(half), offline)).value).toBe(false);
  });

  test("usbguard rules ending in block: true when usbguard is active, unknown when that cannot be told", async () => {
    const rules = {
      files: {
        "etc/usbguard/rules.d/50-bulwark.conf":
          "allow with-interface 09:00:*\nallow with-interface one-of { 03:*:* }\nblock\n",
        // usbguard is installed (its daemon where the package puts it).
        "usr/sbin/usbguard-daemon": "",
      },
    };
    const active = programs({ "systemctl is-active": { stdout: "active\n" } });
    expect(
      (await readUsbStorageBlocked(await tree(rules), { isLive: true, runProgram: active.run })).value,
    ).toBe(true);
    expect(active.calls).toEqual([["systemctl", "is-active", "usbguard"]]);
    const stopped = programs({ "systemctl is-active": { code: 3, stdout: "inactive\n" } });
    expect(
      (await readUsbStorageBlocked(await tree(rules), { isLive: true, runProgram: stopped.run })).value,
    ).toBe(false);
    expect((await readUsbStorageBlocked(await tree(rules), offline)).detail).toContain(
      "read on the live machine only",
    );
    const storageAllowed = {
      files: {
        "etc/usbguard/rules.d/50-bulwark.conf": "allow with-interface one-of { 08:*:* }\nblock\n",
        "usr/sbin/usbguard-daemon": "",
      },
    };
    // Without usbguard installed nothing runs the rules: false, whatever ROOT is, saying why.
    const uninstalled = await readUsbStorageBlocked(
      await tree({ files: { "etc/usbguard/rules.d/50-bulwark.conf": "block\n" } }),
      offline,
    );
    expect(uninstalled).toEqual({
      value: false,
      detail: expect.stringContaining("blocks storage, but usbguard is not installed"),
    });
    expect(
      (await readUsbStorageBlocked(await tree(storageAllowed), { isLive: true, runProgram: active.run }))
        .value,
    ).toBe(false);
  });
});

describe("firewall_enabled", () => {
  const ruleset = (chains: object[]) => ({
    "nft -j": {
      stdout: JSON.stringify({ nftables: [{ metainfo: {} }, ...chains.map((chain) => ({ chain }))] }),
    },
  });
  const inputChain = (policy: string, table = "filter") => ({
    family: "inet",
    table,
    name: "input",
    type: "filter",
    hook: "input",
    prio: 0,
    policy,
  });

  test("live: an input chain that drops by default, or firewalld's: true; nothing filtering input: false", async () => {
    const at = async (outputs: Parameters<typeof programs>[0], ...parts: MachinePart[]) =>
      readFirewallEnabled(await tree(...parts), { isLive: true, runProgram: programs(outputs).run });
    expect((await at(ruleset([inputChain("drop")]))).value).toBe(true);
    expect((await at(ruleset([inputChain("accept", "firewalld")]))).value).toBe(true);
    expect((await at(ruleset([]))).value).toBe(false);
    // Input chains that accept by default filter with rules, which are not judged.
    expect((await at(ruleset([inputChain("accept")]))).value).toBeUndefined();
    // Legacy iptables tables are not in the nft ruleset.
    expect(
      (await at(ruleset([]), { files: { "proc/net/ip_tables_names": "filter\n" } })).value,
    ).toBeUndefined();
  });

  test("ufw's ENABLED=yes: true even where the ruleset cannot be read; ENABLED=no: left out", async () => {
    const ufw = (enabled: string) => ({
      files: { "etc/ufw/ufw.conf": `# ufw\nENABLED=${enabled}\nLOGLEVEL=low\n` },
    });
    const offline = { isLive: false, runProgram: programs({}).run };
    expect((await readFirewallEnabled(await tree(ufw("yes")), offline)).value).toBe(true);
    expect((await readFirewallEnabled(await tree(ufw("no")), offline)).value).toBeUndefined();
    const noNft = {
      isLive: true,
      runProgram: programs({ "nft -j": { code: 1, stderr: "Operation not permitted" } }).run,
    };
    expect((await readFirewallEnabled(await tree(ufw("yes")), noNft)).value).toBe(true);
  });
});

describe("screen_lock_enabled", () => {
  const dconf = (settings: string, locks: string): MachinePart => ({
    files: {
      "etc/dconf/db/local.d/00-screensaver": settings,
      "etc/dconf/db/local.d/locks/screensaver": locks,
    },
  });
  const LOCKS = "/org/gnome/desktop/screensaver/lock-enabled\n/org/gnome/desktop/session/idle-delay\n";

  test("a locked system setting decides; without a lock the fact is left out", async () => {
    const enabled =
      "[org/gnome/desktop/screensaver]\nlock-enabled=true\n[org/gnome/desktop/session]\nidle-delay=uint32 300\n";
    expect((await readScreenLockEnabled(await tree(dconf(enabled, LOCKS)))).value).toBe(true);
    expect(
      (await readScreenLockEnabled(await tree(dconf(enabled.replace("=true", "=false"), LOCKS)))).value,
    ).toBe(false);
    expect((await readScreenLockEnabled(await tree(dconf(enabled.replace("300", "0"), LOCKS)))).value).toBe(
      false,
    );
    expect((await readScreenLockEnabled(await tree(dconf(enabled, "")))).value).toBeUndefined();
    expect((await readScreenLockEnabled(await tree())).value).toBeUndefined();
  });
});
