import { afterAll, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { parseMountInfo, readDiskEncryption } from "../../src/agent/facts/disk-encryption";
import { MachineTree } from "../../src/agent/root-path";
import { buildMachine, type MachinePart, ROOT_DEVICES, removeMachines } from "../helpers/agent-machine";

afterAll(removeMachines);

async function diskOf(variant: keyof typeof ROOT_DEVICES) {
  return readDiskEncryption(await MachineTree.open(buildMachine(...ROOT_DEVICES[variant])));
}

test("a plain partition (sda2, ext4): false, after looking at its disk too", async () => {
  expect(await diskOf("plainPartition")).toEqual({
    value: false,
    detail: "/ is /dev/sda2 (ext4), with no dm-crypt layer on sda2 or below it",
  });
});

test("LUKS: / on dm-0 whose dm/uuid starts with CRYPT-", async () => {
  expect(await diskOf("luks")).toEqual({
    value: true,
    detail: "/ is /dev/mapper/luks-3f6c2a1e (ext4), on dm-crypt: dm-0 (CRYPT-LUKS2)",
  });
});

test("LVM on LUKS: / on an LVM volume whose slaves/ lead to a CRYPT- device", async () => {
  expect(await diskOf("lvmOnLuks")).toEqual({
    value: true,
    detail: "/ is /dev/mapper/vgubuntu-root (ext4), on dm-crypt: dm-0 (CRYPT-LUKS2)",
  });
});

test("LVM without LUKS: false, after walking down to the nvme partition and its disk", async () => {
  expect((await diskOf("lvmWithoutLuks")).value).toBe(false);
});

test("btrfs on LUKS: the anonymous 0:N device is judged by its file system's devices", async () => {
  expect((await diskOf("btrfsOnLuks")).value).toBe(true);
});

test("an overlay root is not a block device: left out, with the reason", async () => {
  expect(await diskOf("overlay")).toEqual({ detail: "/ is overlay (overlay), not a block device" });
});

test("a sysfs link that leaves ROOT is not followed, even to a device claiming dm-crypt", async () => {
  const root = buildMachine(...ROOT_DEVICES.escapingLink);
  const outside = join(dirname(root), "outside", "dm-0");
  mkdirSync(join(outside, "dm"), { recursive: true });
  writeFileSync(join(outside, "dm", "uuid"), "CRYPT-LUKS2-planted\n");
  await expect(readDiskEncryption(await MachineTree.open(root))).rejects.toThrow(/leads out of/);
});

test("no mountinfo, or a device missing from /sys: left out", async () => {
  expect(
    (await readDiskEncryption(await MachineTree.open(buildMachine({ folders: ["proc"] })))).value,
  ).toBeUndefined();
  const mounts = ROOT_DEVICES.luks[0] as MachinePart;
  const missing = await readDiskEncryption(await MachineTree.open(buildMachine(mounts)));
  expect(missing).toEqual({
    detail: "/ is /dev/mapper/luks-3f6c2a1e (ext4), but /sys/dev/block/254:0 does not exist",
  });
});

test("mountinfo: optional fields, the separator and octal escapes in mount points", () => {
  const mounts = parseMountInfo(
    "36 35 98:0 /mnt1 /mnt/a\\040b rw,noatime master:1 shared:2 - ext3 /dev/root rw,errors=continue\n" +
      "29 1 254:1 / / rw,relatime - ext4 /dev/mapper/vg-root rw\n",
  );
  expect(mounts).toEqual([
    { major: 98, minor: 0, mountPoint: "/mnt/a b", fsType: "ext3", source: "/dev/root" },
    { major: 254, minor: 1, mountPoint: "/", fsType: "ext4", source: "/dev/mapper/vg-root" },
  ]);
});
