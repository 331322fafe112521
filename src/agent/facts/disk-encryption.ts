import { basename, dirname } from "node:path";
import type { MachineReader } from "../root-path";
import { type FactReading, known, unknown } from "./fact";

/** One line of /proc/self/mountinfo (proc(5)): the fields the agent needs. */
export interface MountInfo {
  major: number;
  minor: number;
  mountPoint: string;
  fsType: string;
  source: string;
}

/** Block devices visited below `/` at most: a stacking deeper than this is not a real machine's. */
const MAX_DEVICES = 64;

/**
 * `disk_encrypted`: the block device mounted at `/`, found through `/sys/dev/block/MAJ:MIN`, is a
 * device-mapper device whose `dm/uuid` starts with `CRYPT-` (dm-crypt: LUKS or plain), or has one among
 * the devices below it (`slaves/`, and a partition's disk): LVM on LUKS counts. A btrfs root (an anonymous
 * `0:N` device) is judged by every device of its file system. Left out when `/` is not on a block device
 * (overlay, tmpfs, NFS, ZFS) or the layout cannot be read.
 */
export async function readDiskEncryption(tree: MachineReader): Promise<FactReading<boolean>> {
  const mountinfo = await tree.readText("/proc/self/mountinfo");
  if (mountinfo === null) return unknown("/proc/self/mountinfo does not exist");
  // The last mount at / is the one on top (a later mount hides the earlier ones).
  const root = parseMountInfo(mountinfo)
    .filter((mount) => mount.mountPoint === "/")
    .at(-1);
  if (!root) return unknown("/proc/self/mountinfo has no mount at /");
  const described = `/ is ${root.source} (${root.fsType})`;
  if (root.major !== 0) {
    const device = `/sys/dev/block/${root.major}:${root.minor}`;
    if (!(await tree.exists(device))) return unknown(`${described}, but ${device} does not exist`);
    return judgeDevices(tree, [await tree.canonical(device)], described);
  }
  if (root.fsType === "btrfs") return judgeBtrfs(tree, root, described);
  return unknown(`${described}, not a block device`);
}

/** What the walk below one device found: a dm-crypt device, none, or why it cannot tell. */
type CryptLayer = { found: string } | { found: null } | { unknown: string };

/** Whether every one of `devices` (sysfs folders) has a dm-crypt device at or below it. */
async function judgeDevices(tree: MachineReader, devices: string[], described: string) {
  const layers: string[] = [];
  for (const device of devices) {
    const layer = await findCryptLayer(tree, device);
    if ("unknown" in layer) return unknown<boolean>(`${described}: ${layer.unknown}`);
    if (layer.found === null)
      return known(false, `${described}, with no dm-crypt layer on ${basename(device)} or below it`);
    layers.push(layer.found);
  }
  return known(true, `${described}, on dm-crypt: ${layers.join(", ")}`);
}

/** Walks from a block device's sysfs folder through the devices below it to a dm-crypt device. */
async function findCryptLayer(tree: MachineReader, start: string): Promise<CryptLayer> {
  const pending = [start];
  const seen = new Set<string>();
  while (pending.length > 0) {
    const device = pending.shift() as string;
    if (seen.has(device)) continue;
    seen.add(device);
    if (seen.size > MAX_DEVICES)
      return { unknown: `more than ${MAX_DEVICES} devices below ${basename(start)}` };
    const uuid = (await tree.readText(`${device}/dm/uuid`))?.trim();
    if (uuid?.startsWith("CRYPT-")) return { found: `${basename(device)} (${uuid.split("-", 2).join("-")})` };
    const backingFile = (await tree.readText(`${device}/loop/backing_file`))?.trim();
    if (backingFile)
      return {
        unknown: `${basename(device)} is a loop device on the file ${backingFile}, whose disk is not followed`,
      };
    for (const slave of (await tree.list(`${device}/slaves`)) ?? [])
      pending.push(await tree.canonical(`${device}/slaves/${slave}`));
    // A partition's folder sits in its disk's folder (sda/sda2): the disk may be a mapping too.
    if (await tree.exists(`${device}/partition`)) pending.push(dirname(device));
  }
  return { found: null };
}

/** A btrfs root: its mount source names one of its devices; every device of that file system is judged. */
async function judgeBtrfs(tree: MachineReader, root: MountInfo, described: string) {
  const source = await sourceDevice(tree, root.source);
  if (!source) return unknown<boolean>(`${described}: its device ${root.source} is not found in /sys`);
  for (const fsid of (await tree.list("/sys/fs/btrfs")) ?? []) {
    const names = (await tree.list(`/sys/fs/btrfs/${fsid}/devices`)) ?? [];
    const devices = await Promise.all(
      names.map((name) => tree.canonical(`/sys/fs/btrfs/${fsid}/devices/${name}`)),
    );
    if (devices.includes(source)) return judgeDevices(tree, devices, described);
  }
  return unknown<boolean>(`${described}: no /sys/fs/btrfs file system holds ${basename(source)}`);
}

/** The sysfs folder of a mount source `/dev/NAME` or `/dev/mapper/NAME`, or null. */
async function sourceDevice(tree: MachineReader, source: string): Promise<string | null> {
  const mapped = /^\/dev\/mapper\/([^/]+)$/.exec(source);
  if (mapped) {
    for (const name of (await tree.list("/sys/block")) ?? [])
      if ((await tree.readText(`/sys/block/${name}/dm/name`))?.trim() === mapped[1])
        return tree.canonical(`/sys/block/${name}`);
    return null;
  }
  const plain = /^\/dev\/([^/]+)$/.exec(source);
  if (!plain || !(await tree.exists(`/sys/class/block/${plain[1]}`))) return null;
  return tree.canonical(`/sys/class/block/${plain[1]}`);
}

/**
 * The mounts of a mountinfo text (proc(5)): `ID PARENT MAJ:MIN ROOT MOUNT_POINT OPTIONS [OPTIONAL...] -
 * FSTYPE SOURCE SUPER_OPTIONS`, with the kernel's octal escapes (`\040` for a space) undone.
 */
export function parseMountInfo(text: string): MountInfo[] {
  const mounts: MountInfo[] = [];
  for (const line of text.split("\n")) {
    const fields = line.trim().split(" ");
    const separator = fields.indexOf("-", 6);
    const device = /^(\d+):(\d+)$/.exec(fields[2] ?? "");
    if (separator < 0 || !device || fields.length < separator + 3) continue;
    mounts.push({
      major: Number(device[1]),
      minor: Number(device[2]),
      mountPoint: unescapeOctal(fields[4] as string),
      fsType: unescapeOctal(fields[separator + 1] as string),
      source: unescapeOctal(fields[separator + 2] as string),
    });
  }
  return mounts;
}

function unescapeOctal(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}
