/** `bulwark agent facts`, run from the built executable against prepared machines and this one. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import {
  buildMachine,
  type MachinePart,
  OS_RELEASES,
  ROOT_DEVICES,
  removeMachines,
  USB_STORAGE,
} from "../helpers/agent-machine";
import { buildBinary, runCommand } from "../helpers/binary";

let binary: string;
beforeAll(async () => {
  binary = await buildBinary();
}, 120_000);
afterAll(removeMachines);

function facts(...args: string[]) {
  return runCommand(binary, ["agent", "facts", ...args], tmpdir());
}

/** `agent facts --json --root` on a machine made of `parts`: the parsed answer. */
function factsOf(...parts: MachinePart[]) {
  const result = facts("--json", "--root", buildMachine(...parts));
  expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: "" });
  return JSON.parse(result.stdout);
}

describe("bulwark agent facts --root DIR --json", () => {
  test.each([
    ["plainPartition", false],
    ["luks", true],
    ["lvmOnLuks", true],
    ["lvmWithoutLuks", false],
    ["btrfsOnLuks", true],
  ] as const)(
    "%s: disk_encrypted is %p",
    (variant, encrypted) => {
      expect(factsOf(OS_RELEASES.ubuntu, ...ROOT_DEVICES[variant])).toEqual({
        os_version: "ubuntu 24.04",
        facts: {
          disk_encrypted: encrypted,
          vpn_connected: false,
          usb_storage_blocked: false,
          usb_devices_blocked: false,
          screenshots_blocked: false,
        },
      });
    },
    30_000,
  );

  test("an overlay root, or a link out of ROOT: disk_encrypted is left out", () => {
    expect(factsOf(OS_RELEASES.fedora, ...ROOT_DEVICES.overlay).facts).toEqual({
      vpn_connected: false,
      usb_storage_blocked: false,
      usb_devices_blocked: false,
      screenshots_blocked: false,
    });
    const root = buildMachine(OS_RELEASES.debian, ...ROOT_DEVICES.escapingLink);
    mkdirSync(join(dirname(root), "outside", "dm-0", "dm"), { recursive: true });
    writeFileSync(join(dirname(root), "outside", "dm-0", "dm", "uuid"), "CRYPT-LUKS2-planted\n");
    const escaped = facts("--json", "--root", root);
    expect(JSON.parse(escaped.stdout)).toEqual({
      os_version: "debian 12",
      facts: {
        vpn_connected: false,
        usb_storage_blocked: false,
        usb_devices_blocked: false,
        screenshots_blocked: false,
      },
    });
  }, 30_000);

  test("os-release variants: no VERSION_ID leaves os_version out; /usr/lib/os-release is the fallback", () => {
    expect(factsOf(OS_RELEASES.arch, ...ROOT_DEVICES.luks).os_version).toBeUndefined();
    expect(factsOf(OS_RELEASES.vendorOnly, ...ROOT_DEVICES.luks).os_version).toBe(
      "opensuse-tumbleweed 20240501",
    );
  }, 30_000);

  test("the storage rule: in force with the module unloaded, not while it is loaded", () => {
    expect(factsOf(OS_RELEASES.ubuntu, USB_STORAGE.rule).facts.usb_storage_blocked).toBe(true);
    expect(
      factsOf(OS_RELEASES.ubuntu, USB_STORAGE.rule, USB_STORAGE.moduleLoaded).facts.usb_storage_blocked,
    ).toBe(false);
  }, 30_000);
});

test("without --json: one line per fact, its value and how it was read, or unknown and why", () => {
  const result = facts("--root", buildMachine(OS_RELEASES.ubuntu, ...ROOT_DEVICES.overlay));
  expect(result.code).toBe(0);
  const lines = result.stdout.trim().split("\n");
  expect(lines.map((line) => line.split(":")[0])).toEqual([
    "os_version",
    "disk_encrypted",
    "vpn_connected",
    "usb_storage_blocked",
    "usb_devices_blocked",
    "screenshots_blocked",
    "firewall_enabled",
    "screen_lock_enabled",
  ]);
  expect(lines).toContain("disk_encrypted: unknown: / is overlay (overlay), not a block device");
  expect(lines).toContain("screenshots_blocked: false (Linux has no control that blocks screenshots)");
  expect(lines[0]).toBe("os_version: ubuntu 24.04 (ID and VERSION_ID of /etc/os-release)");
}, 30_000);

test("on this machine (ROOT /): valid JSON whose os_version is /etc/os-release's", () => {
  const result = facts("--json");
  expect(result.code).toBe(0);
  const answer = JSON.parse(result.stdout);
  const release = readFileSync("/etc/os-release", "utf8");
  const field = (name: string) => new RegExp(`^${name}="?([^"\\n]*)"?$`, "m").exec(release)?.[1];
  expect(answer.os_version).toBe(`${field("ID")} ${field("VERSION_ID")}`);
  expect(typeof answer.facts).toBe("object");
}, 30_000);

test("usage errors: an unknown flag or agent command, a --root that is not a folder: one line, exit 2", () => {
  for (const args of [
    ["agent", "facts", "--verbose"],
    ["agent", "frob"],
    ["agent", "facts", "--root", "/no/such/folder"],
    ["agent", "facts", "--json=yes"],
  ]) {
    const result = runCommand(binary, args, tmpdir());
    expect({ args, code: result.code }).toEqual({ args, code: 2 });
    expect(result.stderr.trim().split("\n")).toHaveLength(1);
  }
  expect(runCommand(binary, ["help"], tmpdir()).stdout).toContain("agent facts [--root DIR] [--json]");
}, 30_000);
