/**
 * Machines for the agent's facts, as trees under a temporary ROOT laid out as the kernel lays out
 * /proc and /sys (`sys/dev/block/MAJ:MIN` a relative link into `sys/devices/...`, `sys/block/NAME` a link
 * to the same folder, `slaves/NAME` links between them) and as distributions lay out /etc.
 */
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, relative } from "node:path";

/** Files (path -> content), links (path -> target, as `ln -s` takes it) and empty folders under ROOT. */
export interface MachinePart {
  files?: Record<string, string>;
  links?: Record<string, string>;
  folders?: string[];
}

const made: string[] = [];

/** Builds the parts into a new temporary folder; returns ROOT. */
export function buildMachine(...parts: MachinePart[]): string {
  const base = mkdtempSync(join(tmpdir(), "bulwark-machine-"));
  made.push(base);
  const root = join(base, "root");
  mkdirSync(root);
  for (const part of parts) {
    for (const folder of part.folders ?? []) mkdirSync(join(root, folder), { recursive: true });
    for (const [path, content] of Object.entries(part.files ?? {})) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), content);
    }
    for (const [path, target] of Object.entries(part.links ?? {})) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      symlinkSync(target, join(root, path));
    }
  }
  return root;
}

/** Every file under `folder` with its content and mode, for comparing a tree before and after. */
export function snapshot(folder: string): Record<string, string> {
  const files: Record<string, string> = {};
  for (const entry of readdirSync(folder, { recursive: true }).map(String)) {
    const path = join(folder, entry);
    const stat = statSync(path, { throwIfNoEntry: false });
    if (stat?.isFile())
      files[relative(folder, path)] = `${(stat.mode & 0o777).toString(8)} ${readFileSync(path, "utf8")}`;
  }
  return files;
}

/** Removes every machine built by this process. */
export function removeMachines(): void {
  for (const base of made.splice(0)) rmSync(base, { recursive: true, force: true });
}

/** A mountinfo line (proc(5)) mounting `source` (`fsType`, device `device`) at `/`, after /proc and /sys. */
function mountinfo(device: string, fsType: string, source: string): MachinePart {
  return {
    files: {
      "proc/self/mountinfo": [
        "22 29 0:21 / /proc rw,nosuid,nodev,noexec,relatime shared:12 - proc proc rw",
        "23 29 0:22 / /sys rw,nosuid,nodev,noexec,relatime shared:2 - sysfs sysfs rw",
        `29 1 ${device} / / rw,relatime shared:1 - ${fsType} ${source} rw`,
        "30 29 0:5 / /mnt/usb\\040disk rw,relatime shared:3 - vfat /dev/sdb1 rw",
        "",
      ].join("\n"),
    },
  };
}

const NVME = "devices/pci0000:00/0000:00:1d.0/0000:3d:00.0/nvme/nvme0/nvme0n1";
const SATA = "devices/pci0000:00/0000:00:17.0/ata1/host0/target0:0:0/0:0:0:0/block/sda";
const LUKS_UUID = "CRYPT-LUKS2-3f6c2a1e9d8b4c7a8e5f0a1b2c3d4e5f-luks-3f6c2a1e-9d8b-4c7a-8e5f-0a1b2c3d4e5f";
const LVM_UUID = "LVM-vZr8cXH1J2kL3mN4oP5qR6sT7uV8wX9yA0bC1dE2fG3hI4jK5lM6nO7pQ8rS9tU0";

/** nvme0n1 with its third partition (259:3), as a laptop's disk. */
const nvmeDisk: MachinePart = {
  files: {
    [`sys/${NVME}/dev`]: "259:0\n",
    [`sys/${NVME}/nvme0n1p3/dev`]: "259:3\n",
    [`sys/${NVME}/nvme0n1p3/partition`]: "3\n",
  },
  folders: [`sys/${NVME}/slaves`, `sys/${NVME}/nvme0n1p3/holders`],
  links: {
    "sys/dev/block/259:0": `../../${NVME}`,
    "sys/dev/block/259:3": `../../${NVME}/nvme0n1p3`,
    "sys/block/nvme0n1": `../${NVME}`,
    "sys/class/block/nvme0n1": `../../${NVME}`,
    "sys/class/block/nvme0n1p3": `../../${NVME}/nvme0n1p3`,
  },
};

/** A device-mapper device `dm-N` (254:N) with `uuid` and `name`, on `slaves` (name -> link target). */
function dmDevice(index: number, uuid: string, name: string, slaves: Record<string, string>): MachinePart {
  const folder = `sys/devices/virtual/block/dm-${index}`;
  return {
    files: {
      [`${folder}/dev`]: `254:${index}\n`,
      [`${folder}/dm/uuid`]: `${uuid}\n`,
      [`${folder}/dm/name`]: `${name}\n`,
    },
    folders: [`${folder}/holders`],
    links: {
      [`sys/dev/block/254:${index}`]: `../../devices/virtual/block/dm-${index}`,
      [`sys/block/dm-${index}`]: `../devices/virtual/block/dm-${index}`,
      [`sys/class/block/dm-${index}`]: `../../devices/virtual/block/dm-${index}`,
      ...Object.fromEntries(
        Object.entries(slaves).map(([slave, target]) => [`${folder}/slaves/${slave}`, target]),
      ),
    },
  };
}

/** dm-0: LUKS2 on nvme0n1p3. */
const luksOnNvme = dmDevice(0, LUKS_UUID, "luks-3f6c2a1e", {
  nvme0n1p3: `../../../../${NVME.slice(8)}/nvme0n1p3`,
});

/** The root file system's device, one variant each. */
export const ROOT_DEVICES = {
  /** /dev/sda2, ext4, a partition of a SATA disk with no mapping. */
  plainPartition: [
    mountinfo("8:2", "ext4", "/dev/sda2"),
    {
      files: {
        [`sys/${SATA}/dev`]: "8:0\n",
        [`sys/${SATA}/sda2/dev`]: "8:2\n",
        [`sys/${SATA}/sda2/partition`]: "2\n",
      },
      folders: [`sys/${SATA}/slaves`, `sys/${SATA}/sda2/holders`],
      links: { "sys/dev/block/8:2": `../../${SATA}/sda2`, "sys/block/sda": `../${SATA}` },
    },
  ],
  /** dm-0 (LUKS2) on nvme0n1p3, ext4. */
  luks: [mountinfo("254:0", "ext4", "/dev/mapper/luks-3f6c2a1e"), nvmeDisk, luksOnNvme],
  /** dm-1 (an LVM volume) on dm-0 (LUKS2) on nvme0n1p3: Ubuntu's encrypted install. */
  lvmOnLuks: [
    mountinfo("254:1", "ext4", "/dev/mapper/vgubuntu-root"),
    nvmeDisk,
    luksOnNvme,
    dmDevice(1, LVM_UUID, "vgubuntu-root", { "dm-0": "../../dm-0" }),
  ],
  /** dm-0 (an LVM volume) directly on nvme0n1p3. */
  lvmWithoutLuks: [
    mountinfo("254:0", "xfs", "/dev/mapper/rhel-root"),
    nvmeDisk,
    dmDevice(0, LVM_UUID, "rhel-root", { nvme0n1p3: `../../../../${NVME.slice(8)}/nvme0n1p3` }),
  ],
  /** A container's overlay root. */
  overlay: [mountinfo("0:33", "overlay", "overlay")],
  /** btrfs (anonymous device 0:31) on dm-0 (LUKS2): Fedora's encrypted install. */
  btrfsOnLuks: [
    mountinfo("0:31", "btrfs", "/dev/mapper/luks-3f6c2a1e"),
    nvmeDisk,
    luksOnNvme,
    {
      links: {
        "sys/fs/btrfs/5e1f0a77-8c1d-4f3a-9b2e-7d6c5b4a3f21/devices/dm-0":
          "../../../../devices/virtual/block/dm-0",
      },
    },
  ],
  /**
   * 254:0 is a link climbing out of ROOT to a folder beside it that claims dm-crypt: it must not be
   * followed (the built tree's ROOT is `<base>/root`, and `<base>/outside` is made by the test).
   */
  escapingLink: [
    mountinfo("254:0", "ext4", "/dev/mapper/luks-3f6c2a1e"),
    { links: { "sys/dev/block/254:0": "../../../../outside/dm-0" } },
  ],
} satisfies Record<string, MachinePart[]>;

/** os-release variants. */
export const OS_RELEASES = {
  /** Ubuntu writes /usr/lib/os-release and links /etc/os-release to it. */
  ubuntu: {
    files: {
      "usr/lib/os-release":
        'PRETTY_NAME="Ubuntu 24.04.1 LTS"\nNAME="Ubuntu"\nVERSION_ID="24.04"\nVERSION="24.04.1 LTS (Noble Numbat)"\nID=ubuntu\nID_LIKE=debian\n',
    },
    links: { "etc/os-release": "../usr/lib/os-release" },
  },
  /** An absolute link, as some images have it: resolved inside ROOT. */
  debian: {
    files: {
      "usr/lib/os-release": 'PRETTY_NAME="Debian GNU/Linux 12 (bookworm)"\nVERSION_ID="12"\nID=debian\n',
    },
    links: { "etc/os-release": "/usr/lib/os-release" },
  },
  /** Quotes of both kinds, an escape, a comment. */
  fedora: {
    files: {
      "etc/os-release":
        '# Fedora\nNAME="Fedora Linux"\nVERSION="40 (Workstation \\"Edition\\")"\nID=\'fedora\'\nVERSION_ID=40\nPLATFORM_ID="platform:f40"\n',
    },
  },
  /** No VERSION_ID: a rolling release. */
  arch: { files: { "etc/os-release": 'NAME="Arch Linux"\nID=arch\nBUILD_ID=rolling\n' } },
  /** Only the vendor's copy, no /etc/os-release: os-release(5)'s fallback. */
  vendorOnly: { files: { "usr/lib/os-release": "ID=opensuse-tumbleweed\nVERSION_ID=20240501\n" } },
} satisfies Record<string, MachinePart>;

/** The agent's storage rule, and the modules it keeps out. */
export const USB_STORAGE = {
  rule: {
    files: {
      "etc/modprobe.d/bulwark.conf": "# bulwark\ninstall usb-storage /bin/false\ninstall uas /bin/false\n",
    },
  },
  moduleLoaded: {
    files: { "sys/module/usb_storage/refcnt": "0\n" },
    folders: ["sys/module/usb_storage/parameters"],
  },
} satisfies Record<string, MachinePart>;
