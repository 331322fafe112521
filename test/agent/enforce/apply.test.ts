/** Enforcement on temporary ROOT trees: the files written, what turning a setting off gives back, and undo. */
import { afterEach, describe, expect, test } from "bun:test";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { undoAll } from "../../../src/agent/enforce/apply";
import { JOURNAL_FILE, readJournal } from "../../../src/agent/enforce/journal";
import {
  DEVICE_KEYS,
  enforce,
  interfacesOf,
  makeMachine,
  permissivePolicy,
  policyWith,
  recordingRunner,
  resultOf,
  treeListing,
  USER_HOSTS,
  vpnSettings,
} from "./enforce-fixtures";

let machine: ReturnType<typeof makeMachine>;
afterEach(() => machine?.cleanup());

function read(path: string): string {
  return readFileSync(join(machine.root, path), "utf8");
}

function modeOf(path: string): number {
  return statSync(join(machine.root, path)).mode & 0o7777;
}

const STRICT = policyWith({
  usb: { allowed: false, whitelist: ["046d:c52b"], allowed_classes: ["hid"] },
  storage: { external_storage_allowed: false },
  network: { blocked_domains: ["pastebin.com", "*.pastebin.com", "file.io"] },
});

describe("storage.external_storage_allowed", () => {
  test("false writes the modprobe rule; true again removes it, leaving the tree as it was", async () => {
    machine = makeMachine();
    const before = treeListing(machine.root);
    const { results } = await enforce(machine, policyWith({ storage: { external_storage_allowed: false } }));
    expect(resultOf(results, "storage.external_storage_allowed").outcome).toBe("enforced");
    expect(read("etc/modprobe.d/bulwark.conf")).toContain(
      "install usb-storage /bin/false\ninstall uas /bin/false\n",
    );
    expect(modeOf("etc/modprobe.d/bulwark.conf")).toBe(0o644);

    await enforce(machine, permissivePolicy());
    expect(treeListing(machine.root)).toEqual(before);
    expect(existsSync(join(machine.stateDir, JOURNAL_FILE))).toBe(false);
  });

  test("an administrator's own modprobe.d/bulwark.conf is kept in the journal and given back byte for byte", async () => {
    machine = makeMachine();
    const theirs = "# mine\r\noptions snd-hda-intel power_save=1"; // no final line break, a CR
    writeFileSync(join(machine.root, "etc/modprobe.d/bulwark.conf"), theirs);
    chmodSync(join(machine.root, "etc/modprobe.d/bulwark.conf"), 0o640);
    const before = treeListing(machine.root);

    await enforce(machine, policyWith({ storage: { external_storage_allowed: false } }));
    expect(read("etc/modprobe.d/bulwark.conf")).toContain("install uas /bin/false");
    expect(modeOf("etc/modprobe.d/bulwark.conf")).toBe(0o644);
    const [entry] = readJournal(machine.stateDir).files;
    expect(entry?.original).toEqual({ content_base64: Buffer.from(theirs).toString("base64"), mode: 0o640 });

    await enforce(machine, permissivePolicy());
    expect(read("etc/modprobe.d/bulwark.conf")).toBe(theirs);
    expect(treeListing(machine.root)).toEqual(before);
  });
});

describe("usb.allowed", () => {
  test("false writes usbguard rules (hubs, whitelist, classes, block) in folders it creates, and takes them away again", async () => {
    machine = makeMachine();
    mkdirSync(join(machine.root, "usr/sbin"), { recursive: true });
    writeFileSync(join(machine.root, "usr/sbin/usbguard-daemon"), "", { mode: 0o755 });
    const before = treeListing(machine.root);
    const policy = policyWith({
      usb: { allowed: false, whitelist: ["046d:c52b"], allowed_classes: ["hid", "audio"] },
    });
    const { results } = await enforce(machine, policy);
    // The stand-in machine's usbguard lists no rules: written is not in effect (the executable's tests
    // run usbguard's own daemon for the other case).
    expect(resultOf(results, "usb.allowed")).toMatchObject({
      outcome: "failed",
      detail: expect.stringContaining("is written, but usbguard's daemon has not loaded it"),
    });
    expect(resultOf(results, "usb.whitelist")).toMatchObject({
      outcome: "failed",
      detail: expect.stringContaining("not in effect: "),
    });
    const rules = read("etc/usbguard/rules.d/50-bulwark.conf")
      .split("\n")
      .filter((line) => line && !line.startsWith("#"));
    expect(rules).toEqual([
      "allow with-interface 09:00:*",
      "allow id 046d:c52b",
      "allow with-interface one-of { 03:*:* }",
      "allow with-interface one-of { 01:*:* }",
      "block",
    ]);
    expect(modeOf("etc/usbguard/rules.d/50-bulwark.conf")).toBe(0o600);
    expect(modeOf("etc/usbguard")).toBe(0o755);
    expect(readJournal(machine.stateDir).files[0]?.created_dirs).toEqual([
      "/etc/usbguard",
      "/etc/usbguard/rules.d",
    ]);

    await enforce(machine, permissivePolicy());
    expect(treeListing(machine.root)).toEqual(before);
  });

  test("without usbguard installed the rules are written but the setting says nothing blocks", async () => {
    machine = makeMachine();
    const { results } = await enforce(machine, policyWith({ usb: { allowed: false } }));
    expect(resultOf(results, "usb.allowed").outcome).toBe("unsupported");
    expect(resultOf(results, "usb.allowed").detail).toContain("usbguard is not installed");
    expect(read("etc/usbguard/rules.d/50-bulwark.conf")).toContain("block\n");
  });

  test("without usbguard installed the whitelist and the allowed classes are reported as having no effect", async () => {
    machine = makeMachine();
    const { results } = await enforce(
      machine,
      policyWith({ usb: { allowed: false, whitelist: ["046d:c52b"], allowed_classes: ["hid"] } }),
    );
    for (const setting of ["usb.whitelist", "usb.allowed_classes"])
      expect(resultOf(results, setting)).toMatchObject({
        outcome: "reported",
        detail: expect.stringContaining("no effect: usbguard is not installed"),
      });
  });

  test("audit_only writes nothing and reports", async () => {
    machine = makeMachine();
    const before = treeListing(machine.root);
    const { results } = await enforce(machine, policyWith({ usb: { allowed: false, audit_only: true } }));
    expect(resultOf(results, "usb.allowed").outcome).toBe("reported");
    expect(resultOf(results, "usb.audit_only").outcome).toBe("reported");
    expect(treeListing(machine.root)).toEqual(before);
  });
});

describe("network.blocked_domains", () => {
  test("a section of /etc/hosts maps each exact name to 0.0.0.0 and ::, and wildcards are said to be unsupported", async () => {
    machine = makeMachine();
    const { results } = await enforce(machine, STRICT);
    // The user's file had no final line break: the section starts on a line of its own.
    expect(read("etc/hosts")).toBe(
      `${USER_HOSTS}\n# BEGIN bulwark\n# Written by the Bulwark agent (network.blocked_domains); edits here are replaced.\n` +
        "0.0.0.0 pastebin.com\n:: pastebin.com\n0.0.0.0 file.io\n:: file.io\n# END bulwark\n",
    );
    const blocked = resultOf(results, "network.blocked_domains");
    expect(blocked.outcome).toBe("enforced");
    expect(blocked.detail).toContain("unsupported: *.pastebin.com");
    expect(blocked.detail).toStartWith("2 names resolve to 0.0.0.0");
    const one = await enforce(machine, policyWith({ network: { blocked_domains: ["file.io"] } }));
    expect(resultOf(one.results, "network.blocked_domains").detail).toStartWith("1 name resolves to 0.0.0.0");
  });

  test("the section is replaced where it stands, the user's lines around it kept exactly, and removed when the list empties", async () => {
    machine = makeMachine();
    await enforce(machine, policyWith({ network: { blocked_domains: ["pastebin.com"] } }));
    // The user adds a line after the agent's section.
    const withSection = read("etc/hosts");
    writeFileSync(join(machine.root, "etc/hosts"), `${withSection}10.0.0.5 nas.lan\n`);

    await enforce(machine, policyWith({ network: { blocked_domains: ["file.io"] } }));
    const hosts = read("etc/hosts");
    expect(hosts.startsWith(`${USER_HOSTS}\n# BEGIN bulwark\n`)).toBe(true);
    expect(hosts.endsWith("0.0.0.0 file.io\n:: file.io\n# END bulwark\n10.0.0.5 nas.lan\n")).toBe(true);
    expect(hosts).not.toContain("pastebin");

    await enforce(machine, permissivePolicy());
    expect(read("etc/hosts")).toBe(`${USER_HOSTS}\n10.0.0.5 nas.lan\n`);
    expect(readJournal(machine.stateDir).files).toEqual([]);
  });

  test("turning the list off gives back the untouched file byte for byte, its missing final line break too", async () => {
    machine = makeMachine();
    chmodSync(join(machine.root, "etc/hosts"), 0o664);
    const before = treeListing(machine.root);
    await enforce(machine, STRICT);
    expect(modeOf("etc/hosts")).toBe(0o664);
    await enforce(machine, policyWith({ ...STRICT, network: { blocked_domains: [] } }));
    expect(read("etc/hosts")).toBe(USER_HOSTS);
    await enforce(machine, permissivePolicy());
    expect(treeListing(machine.root)).toEqual(before);
  });
});

/** A --no-tunnel pass on the machine, which must run no command: what it says of the tunnel. */
async function tunnelWithoutCommands(policy = permissivePolicy()): Promise<string> {
  const quiet = recordingRunner();
  const { results } = await enforce(machine, policy, {
    vpn: vpnSettings(),
    noTunnel: true,
    runner: quiet.runner,
  });
  expect(quiet.calls).toEqual([]);
  return resultOf(results, "tunnel").detail;
}

describe("the tunnel", () => {
  test("writes its wg-quick file 0600 and brings it up; a new endpoint is applied live, a new address restarts it", async () => {
    machine = makeMachine();
    const first = recordingRunner();
    const { results } = await enforce(machine, permissivePolicy(), {
      vpn: vpnSettings(),
      runner: first.runner,
    });
    const conf = join(machine.root, "etc/wireguard/bulwark.conf");
    expect(first.calls).toEqual([`wg-quick up ${conf}`]);
    expect(resultOf(results, "tunnel").outcome).toBe("enforced");
    expect(read("etc/wireguard/bulwark.conf")).toContain(`PrivateKey = ${DEVICE_KEYS.privateKey}\n`);
    expect(modeOf("etc/wireguard/bulwark.conf")).toBe(0o600);

    // The interface is up now (as the kernel shows it in sysfs; here the stand-in kernel's).
    expect(existsSync(join(interfacesOf(machine), "bulwark"))).toBe(true);
    const unchanged = recordingRunner();
    await enforce(machine, permissivePolicy(), { vpn: vpnSettings(), runner: unchanged.runner });
    expect(unchanged.calls).toEqual([]);

    const live = recordingRunner();
    await enforce(machine, permissivePolicy(), {
      vpn: vpnSettings({ endpoint: "vpn2.example.com:51820" }),
      runner: live.runner,
    });
    expect(live.calls).toEqual([`wg-quick strip ${conf}`, "wg syncconf bulwark /dev/stdin"]);
    expect(read("etc/wireguard/bulwark.conf")).toContain("Endpoint = vpn2.example.com:51820\n");

    const restart = recordingRunner();
    await enforce(machine, permissivePolicy(), {
      vpn: vpnSettings({ endpoint: "vpn2.example.com:51820", address: "10.100.0.9/32" }),
      runner: restart.runner,
    });
    expect(restart.calls).toEqual([`wg-quick down ${conf}`, `wg-quick up ${conf}`]);
    expect(read("etc/wireguard/bulwark.conf")).toContain("Address = 10.100.0.9/32\n");

    const gone = recordingRunner();
    await enforce(machine, permissivePolicy(), { vpn: null, runner: gone.runner });
    expect(gone.calls).toEqual([`wg-quick down ${conf}`]);
    expect(existsSync(conf)).toBe(false);
    expect(existsSync(join(machine.root, "etc/wireguard"))).toBe(false);
  });

  test("an interface of its name that it did not bring up is left alone: not reconfigured, restarted or taken down", async () => {
    machine = makeMachine();
    // An administrator's own `bulwark` interface (or another enrollment's), there before the agent.
    mkdirSync(join(interfacesOf(machine), "bulwark"), { recursive: true });
    writeFileSync(join(interfacesOf(machine), "bulwark/ifindex"), "7\n");
    const first = recordingRunner();
    const { results } = await enforce(machine, STRICT, { vpn: vpnSettings(), runner: first.runner });
    expect(first.calls).toEqual([]);
    expect(resultOf(results, "tunnel")).toMatchObject({
      outcome: "failed",
      detail: expect.stringContaining(
        "an interface named bulwark exists that this agent did not bring up: it is left alone",
      ),
    });
    expect(resultOf(results, "storage.external_storage_allowed").outcome).toBe("enforced");

    expect(await tunnelWithoutCommands(STRICT)).toContain(
      "not brought up: an interface named bulwark exists that this agent did not bring up (--no-tunnel)",
    );
    const gone = recordingRunner();
    const none = await enforce(machine, STRICT, { vpn: null, runner: gone.runner });
    expect(gone.calls).toEqual([]);
    expect(resultOf(none.results, "tunnel").detail).toContain("did not bring up: it is left alone");
    expect(existsSync(join(interfacesOf(machine), "bulwark"))).toBe(true);
  });

  test("--no-tunnel says whether the interface the agent brought up earlier is there", async () => {
    machine = makeMachine();
    await enforce(machine, permissivePolicy(), { vpn: vpnSettings() });
    expect(await tunnelWithoutCommands()).toEndWith("; brought up earlier, left as it is (--no-tunnel)");
  });

  test("--no-tunnel writes the file and runs nothing; a failing wg-quick fails the tunnel alone", async () => {
    machine = makeMachine();
    expect(await tunnelWithoutCommands()).toEndWith("; not brought up (--no-tunnel)");
    expect(existsSync(join(machine.root, "etc/wireguard/bulwark.conf"))).toBe(true);

    rmSync(join(machine.root, "etc/wireguard"), { recursive: true });
    const failing = recordingRunner(["wg-quick up"]);
    const second = await enforce(machine, STRICT, { vpn: vpnSettings(), runner: failing.runner });
    expect(resultOf(second.results, "tunnel")).toMatchObject({ outcome: "failed" });
    expect(resultOf(second.results, "tunnel").detail).toContain("failed (exit 1): refused");
    expect(resultOf(second.results, "storage.external_storage_allowed").outcome).toBe("enforced");
  });
});

describe("undoAll", () => {
  test("gives back the tree byte for byte (content and modes) as it was before enrollment, and again harmlessly", async () => {
    machine = makeMachine();
    chmodSync(join(machine.root, "etc/hosts"), 0o600);
    const before = treeListing(machine.root);
    await enforce(machine, STRICT, { vpn: vpnSettings() });
    // Policy changes meanwhile: each file is journaled once, with what was there before the agent came.
    await enforce(machine, policyWith({ ...STRICT, usb: { allowed: false, whitelist: ["1050:0407"] } }), {
      vpn: vpnSettings({ address: "10.100.0.7/32" }),
    });
    expect(treeListing(machine.root)).not.toEqual(before);

    const undone = undoAll(machine.root, machine.stateDir);
    expect(undone.failed).toEqual([]);
    expect(undone.restored.sort()).toEqual([
      "/etc/hosts",
      "/etc/modprobe.d/bulwark.conf",
      "/etc/usbguard/rules.d/50-bulwark.conf",
      "/etc/wireguard/bulwark.conf",
    ]);
    expect(treeListing(machine.root)).toEqual(before);
    expect(existsSync(join(machine.stateDir, JOURNAL_FILE))).toBe(false);
    expect(undoAll(machine.root, machine.stateDir)).toEqual({ restored: [], failed: [] });
    expect(treeListing(machine.root)).toEqual(before);
  });

  test("cut short by a crash between two files, the next run finishes it", async () => {
    machine = makeMachine();
    writeFileSync(join(machine.root, "etc/modprobe.d/bulwark.conf"), "options usb-storage quirks=1\n", {
      mode: 0o600,
    });
    const before = treeListing(machine.root);
    await enforce(machine, STRICT, { vpn: vpnSettings() });
    expect(readJournal(machine.stateDir).files).toHaveLength(4);

    const crash = new Error("crash");
    expect(() =>
      undoAll(machine.root, machine.stateDir, {
        afterEachFile: () => {
          throw crash;
        },
      }),
    ).toThrow(crash);
    expect(readJournal(machine.stateDir).files).toHaveLength(3);
    expect(treeListing(machine.root)).not.toEqual(before);

    expect(undoAll(machine.root, machine.stateDir).restored).toHaveLength(3);
    expect(treeListing(machine.root)).toEqual(before);
  });
});

test("a dry run changes nothing under ROOT or in the state folder, and prints the diffs", async () => {
  machine = makeMachine();
  const before = treeListing(machine.base);
  const { text, results } = await enforce(machine, STRICT, { vpn: vpnSettings(), dryRun: true });
  expect(treeListing(machine.base)).toEqual(before);
  expect(existsSync(machine.stateDir)).toBe(false);
  expect(resultOf(results, "storage.external_storage_allowed").outcome).toBe("enforced");
  expect(text).toContain(
    ["--- /dev/null", "+++ /etc/modprobe.d/bulwark.conf (new file, mode 0644)", "@@ -0,0 +1,4 @@"].join("\n"),
  );
  expect(text).toContain("+install usb-storage /bin/false\n+install uas /bin/false\n");
  expect(text).toContain(
    [
      "--- /etc/hosts",
      "+++ /etc/hosts",
      "@@ -1,4 +1,11 @@",
      " 127.0.0.1\tlocalhost",
      " ::1\tlocalhost ip6-localhost",
      " # my printer",
      "-192.168.1.20 printer.lan",
      "\\ No newline at end of file",
      "+192.168.1.20 printer.lan",
      "+# BEGIN bulwark",
    ].join("\n"),
  );
  expect(text).toContain("would run: wg-quick up /etc/wireguard/bulwark.conf");
  expect(text).toContain("PrivateKey = (the device's private key, not shown)");
  expect(text).not.toContain(DEVICE_KEYS.privateKey);

  // Against an enforced machine, a dry run of the permissive policy shows what turning off gives back.
  await enforce(machine, STRICT);
  const enforced = treeListing(machine.base);
  const back = await enforce(machine, permissivePolicy(), { dryRun: true });
  expect(treeListing(machine.base)).toEqual(enforced);
  expect(back.text).toContain("--- /etc/modprobe.d/bulwark.conf\n+++ /dev/null (deleted)\n");
});

test("a file that cannot be written fails its setting alone, with the error", async () => {
  machine = makeMachine();
  // A file where the modprobe.d folder should be: no user, root included, can write below it.
  rmSync(join(machine.root, "etc/modprobe.d"), { recursive: true });
  writeFileSync(join(machine.root, "etc/modprobe.d"), "");
  const { results } = await enforce(machine, STRICT);
  const storage = resultOf(results, "storage.external_storage_allowed");
  expect(storage.outcome).toBe("failed");
  expect(storage.detail).toContain("modprobe.d is not a directory");
  expect(resultOf(results, "network.blocked_domains").outcome).toBe("enforced");
  expect(read("etc/hosts")).toContain("0.0.0.0 file.io");
});

test("a symbolic link on the way out of ROOT is never followed", async () => {
  machine = makeMachine();
  const outside = join(machine.base, "outside");
  mkdirSync(outside);
  symlinkSync(outside, join(machine.root, "etc/wireguard"));
  const { results } = await enforce(machine, permissivePolicy(), { vpn: vpnSettings() });
  expect(resultOf(results, "tunnel").outcome).toBe("failed");
  expect(resultOf(results, "tunnel").detail).toContain("is a symbolic link");
  expect(treeListing(outside)).toEqual(["/ dir 755"]);
});
