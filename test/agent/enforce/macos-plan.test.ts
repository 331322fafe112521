/**
 * The macOS planner and its application: each setting's outcome for a policy with every setting, the
 * hosts section written and undone byte for byte with the resolver's cache flushed, the tunnel's file in
 * Homebrew's prefix and wg-quick, and the restrictions profile pending approval until `profiles` lists
 * it installed, then enforced, and removed again at unenroll.
 */
import { afterEach, describe, expect, test } from "bun:test";
import {
  chmodSync,
  mkdirSync,
  readFileSync,
  renameSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import type { CommandRunner } from "../../../src/agent/enforce/apply";
import type { EnforceRequest } from "../../../src/agent/enforce/enforce";
import { emptyJournal } from "../../../src/agent/enforce/journal";
import { MACOS_SUPPORT } from "../../../src/agent/enforce/platform-support";
import { POLICY_SETTINGS } from "../../../src/agent/enforce/settings";
import { enforceMacosPolicy, undoMacos } from "../../../src/agent/macos/enforce";
import { type MacosMachineState, planMacosEnforcement } from "../../../src/agent/macos/plan";
import type { PolicyData } from "../../../src/domain/policies/policy-document";
import {
  DEVICE_KEYS,
  makeMachine,
  policyWith,
  type TestMachine,
  treeListing,
  USER_HOSTS,
  vpnSettings,
} from "./enforce-fixtures";

const FIXTURES = join(import.meta.dir, "../../fixtures/macos");
const fixture = (name: string) => readFileSync(join(FIXTURES, name), "utf8");

/** A policy that asks for every setting the agent could act on. */
function strictPolicy(): PolicyData {
  return policyWith({
    dlp: {
      clipboard_sharing: false,
      screenshot_allowed: false,
      print_allowed: false,
      sensitive_data_patterns: ["\\d{16}"],
    },
    network: {
      vpn_required: true,
      vpn_always_on: true,
      allowed_domains: ["example.com"],
      blocked_domains: ["ads.example.net", "*.tracker.example"],
      split_tunnel: false,
    },
    usb: { allowed: false, whitelist: ["046d:c52b"], allowed_classes: ["hid"], audit_only: false },
    storage: {
      encryption_required: true,
      external_storage_allowed: false,
      cloud_sync_allowed: false,
      max_file_size_mb: 10,
    },
  });
}

function state(changes: Partial<MacosMachineState> = {}): MacosMachineState {
  return {
    files: { "/private/etc/hosts": { text: USER_HOSTS, mode: 0o644 } },
    journal: emptyJournal(),
    tunnel: "absent",
    usbguardInstalled: false,
    homebrewPrefix: "/opt/homebrew",
    profile: { installed: false, detail: "not installed" },
    isReminderDue: false,
    ...changes,
  };
}

describe("the macOS planner", () => {
  test("a policy with every setting: each outcome, the unsupported ones in MACOS_SUPPORT's words", () => {
    const plans = planMacosEnforcement({
      policy: strictPolicy(),
      vpn: vpnSettings(),
      facts: { disk_encrypted: false, vpn_connected: true },
      machine: state(),
      options: { noTunnel: false, wireGuardPrivateKey: DEVICE_KEYS.privateKey },
      stateDir: "/var/db/bulwark-agent",
    });
    const outcomes = Object.fromEntries(plans.map((plan) => [plan.setting, plan.outcome]));
    expect(outcomes).toEqual({
      "dlp.clipboard_sharing": "unsupported",
      "dlp.clipboard_direction": "unsupported",
      "dlp.screenshot_allowed": "pending_approval",
      "dlp.print_allowed": "unsupported",
      "dlp.sensitive_data_patterns": "unsupported",
      "network.vpn_required": "reported",
      "network.vpn_always_on": "unsupported",
      "network.allowed_domains": "unsupported",
      "network.blocked_domains": "enforced",
      "network.split_tunnel": "reported",
      "usb.allowed": "unsupported",
      "usb.whitelist": "unsupported",
      "usb.allowed_classes": "unsupported",
      "usb.audit_only": "unsupported",
      "storage.encryption_required": "reported",
      "storage.external_storage_allowed": "unsupported",
      "storage.cloud_sync_allowed": "unsupported",
      "storage.max_file_size_mb": "unsupported",
      "wipe.work_paths": "reported",
      tunnel: "enforced",
    });
    expect(plans.map((plan) => plan.setting)).toEqual([...POLICY_SETTINGS, "tunnel"]);
    const byName = new Map(plans.map((plan) => [plan.setting, plan]));
    for (const setting of ["usb.allowed", "storage.external_storage_allowed", "dlp.print_allowed"] as const)
      expect(byName.get(setting)?.detail).toBe(MACOS_SUPPORT[setting].how);
    expect(byName.get("usb.allowed")?.detail).toContain(
      "MDM-supervised Mac (macOS 15's ExternalStorage restriction)",
    );
    expect(byName.get("storage.encryption_required")?.detail).toContain("turn FileVault on");
    const screenshots = byName.get("dlp.screenshot_allowed");
    expect(screenshots?.changes.map((change) => [change.path, change.mode])).toEqual([
      ["/Library/Application Support/Bulwark/bulwark-restrictions.mobileconfig", 0o644],
    ]);
    expect(screenshots).toMatchObject({ profile: "open" });
    const tunnel = byName.get("tunnel");
    expect(tunnel?.changes.map((change) => [change.path, change.mode])).toEqual([
      ["/opt/homebrew/etc/wireguard/bulwark.conf", 0o600],
    ]);
    expect(tunnel?.tunnel).toEqual(["up"]);
    expect(byName.get("network.blocked_domains")?.detail).toContain("*.tracker.example");
  });

  test("without Homebrew's wg-quick the tunnel fails, saying to brew install wireguard-tools", () => {
    const plans = planMacosEnforcement({
      policy: policyWith({}),
      vpn: vpnSettings(),
      facts: {},
      machine: state({ homebrewPrefix: null }),
      options: { noTunnel: false, wireGuardPrivateKey: DEVICE_KEYS.privateKey },
      stateDir: "/var/db/bulwark-agent",
    });
    const tunnel = plans.find((plan) => plan.setting === "tunnel");
    expect(tunnel?.outcome).toBe("failed");
    expect(tunnel?.detail).toContain("brew install wireguard-tools");
  });

  test("an installed profile is enforced and not opened again; one that cannot be read fails", () => {
    const planFor = (profile: MacosMachineState["profile"], isReminderDue = false) =>
      planMacosEnforcement({
        policy: strictPolicy(),
        vpn: null,
        facts: {},
        machine: state({ profile, isReminderDue }),
        options: { noTunnel: true, wireGuardPrivateKey: null },
        stateDir: "/var/db/bulwark-agent",
      }).find((plan) => plan.setting === "dlp.screenshot_allowed");
    expect(planFor({ installed: true, detail: "installed" })).toMatchObject({ outcome: "enforced" });
    expect(planFor({ installed: true, detail: "installed" })).not.toHaveProperty("profile");
    expect(planFor({ problem: "profiles show failed" })?.outcome).toBe("failed");
  });
});

/** A runner that answers `profiles show` from `profiles` (changeable) and records every command. */
function macRunner(): { runner: CommandRunner; calls: string[]; profiles: { output: string } } {
  const calls: string[] = [];
  const profiles = { output: fixture("profiles-show-none.txt") };
  const runner: CommandRunner = async (argv) => {
    const line = argv.join(" ");
    calls.push(line);
    if (line === "/usr/bin/profiles show -type configuration")
      return { exitCode: 0, stdout: profiles.output, stderr: "" };
    return { exitCode: 0, stdout: "", stderr: "" };
  };
  return { runner, calls, profiles };
}

/** A prepared Mac: the hosts file in private/etc, with /etc a link to it as on a real Mac. */
function makeMac(): TestMachine {
  const made = makeMachine();
  mkdirSync(join(made.root, "private"), { recursive: true });
  renameSync(join(made.root, "etc"), join(made.root, "private/etc"));
  symlinkSync("private/etc", join(made.root, "etc"));
  return made;
}

describe("enforcing on a prepared Mac", () => {
  let machine: TestMachine;
  /** The stand-in wireguard-go's socket, listening while the test's tunnel is up. */
  let wireguardGo: { stop(closeActive?: boolean): void } | undefined;
  afterEach(() => {
    wireguardGo?.stop(true);
    wireguardGo = undefined;
    machine?.cleanup();
  });

  function request(
    policy: PolicyData,
    runner: CommandRunner,
    changes: Partial<EnforceRequest> = {},
  ): EnforceRequest {
    return {
      root: machine.root,
      stateDir: machine.stateDir,
      policy,
      vpn: null,
      facts: {},
      options: { noTunnel: false, wireGuardPrivateKey: DEVICE_KEYS.privateKey },
      dryRun: false,
      runner,
      interfaces: join(machine.base, "run-wireguard"),
      broughtUp: null,
      ...changes,
    };
  }

  test("the hosts section is written, the cache flushed, and unenroll gives the file back byte for byte", async () => {
    machine = makeMac();
    const before = treeListing(machine.root);
    const { runner, calls } = macRunner();
    const policy = policyWith({ network: { blocked_domains: ["ads.example.net", "Tracker.example.org"] } });
    const result = await enforceMacosPolicy(request(policy, runner));
    const hosts = readFileSync(join(machine.root, "private/etc/hosts"), "utf8");
    expect(hosts).toBe(
      `${USER_HOSTS}\n# BEGIN bulwark\n# Written by the Bulwark agent (network.blocked_domains); edits here are replaced.\n0.0.0.0 ads.example.net\n:: ads.example.net\n0.0.0.0 tracker.example.org\n:: tracker.example.org\n# END bulwark\n`,
    );
    expect(calls).toContain("/usr/bin/dscacheutil -flushcache");
    expect(calls).toContain("/usr/bin/killall -HUP mDNSResponder");
    expect(result.results.find((entry) => entry.setting === "network.blocked_domains")?.outcome).toBe(
      "enforced",
    );
    const undone = await undoMacos(machine.root, machine.stateDir, runner);
    expect(undone.failed).toEqual([]);
    expect(readFileSync(join(machine.root, "private/etc/hosts"), "utf8")).toBe(USER_HOSTS);
    expect(treeListing(machine.root)).toEqual(before);
  });

  test("a failed flush is said in the detail, not fatal", async () => {
    machine = makeMac();
    const runner: CommandRunner = async (argv) =>
      argv[0] === "/usr/bin/killall"
        ? { exitCode: 1, stdout: "", stderr: "No matching processes belonging to you were found" }
        : { exitCode: 0, stdout: "", stderr: "" };
    const result = await enforceMacosPolicy(
      request(policyWith({ network: { blocked_domains: ["ads.example.net"] } }), runner),
    );
    const entry = result.results.find((found) => found.setting === "network.blocked_domains");
    expect(entry?.outcome).toBe("enforced");
    expect(entry?.detail).toContain(
      "the resolver's cache could not be flushed (/usr/bin/killall -HUP mDNSResponder: exit 1",
    );
  });

  test("the restrictions profile is pending approval until profiles lists it, then enforced; unenroll removes it", async () => {
    machine = makeMac();
    const before = treeListing(machine.root);
    const { runner, calls, profiles } = macRunner();
    const policy = policyWith({ dlp: { screenshot_allowed: false } });
    const first = await enforceMacosPolicy(request(policy, runner));
    const screenshots = first.results.find((entry) => entry.setting === "dlp.screenshot_allowed");
    expect(screenshots?.outcome).toBe("pending_approval");
    expect(screenshots?.detail).toContain("System Settings > Privacy & Security > Profiles");
    // ROOT is not / here: the profile is not opened for anyone, and the detail says where it is.
    expect(screenshots?.detail).toContain("ROOT is not /: open");
    const path = join(machine.root, "Library/Application Support/Bulwark/bulwark-restrictions.mobileconfig");
    expect(statSync(path).mode & 0o777).toBe(0o644);
    const text = readFileSync(path, "utf8");
    expect(text).toContain("<key>allowScreenShot</key>\n\t\t\t<false/>");

    // The same state folder writes the same profile again: nothing changes while it waits.
    const again = await enforceMacosPolicy(request(policy, runner));
    expect(again.plan.find((entry) => entry.setting === "dlp.screenshot_allowed")?.changes).toEqual([]);
    expect(readFileSync(path, "utf8")).toBe(text);

    // The user approved it: profiles lists it at the computer level.
    profiles.output = fixture("profiles-show-installed.txt");
    const approved = await enforceMacosPolicy(request(policy, runner));
    expect(approved.results.find((entry) => entry.setting === "dlp.screenshot_allowed")?.outcome).toBe(
      "enforced",
    );

    const undone = await undoMacos(machine.root, machine.stateDir, runner);
    expect(undone.failed).toEqual([]);
    expect(calls).toContain("/usr/bin/profiles remove -identifier com.bulwark.agent.restrictions");
    expect(treeListing(machine.root)).toEqual(before);
  });

  test("a profile that cannot be removed at unenroll is said, and the rest is undone", async () => {
    machine = makeMac();
    const runner: CommandRunner = async (argv) => {
      const line = argv.join(" ");
      if (line.startsWith("/usr/bin/profiles show"))
        return { exitCode: 0, stdout: fixture("profiles-show-installed.txt"), stderr: "" };
      if (line.startsWith("/usr/bin/profiles remove"))
        return { exitCode: 1, stdout: "", stderr: "profiles: removal failed" };
      return { exitCode: 0, stdout: "", stderr: "" };
    };
    await enforceMacosPolicy(
      request(policyWith({ network: { blocked_domains: ["ads.example.net"] } }), runner),
    );
    const undone = await undoMacos(machine.root, machine.stateDir, runner);
    expect(undone.failed).toHaveLength(1);
    expect(undone.failed[0]?.error).toContain("remove it in System Settings > Privacy & Security > Profiles");
    expect(readFileSync(join(machine.root, "private/etc/hosts"), "utf8")).toBe(USER_HOSTS);
  });

  test("the tunnel: the file in Homebrew's prefix (0600), wg-quick up from that prefix, its utun recorded", async () => {
    machine = makeMac();
    mkdirSync(join(machine.root, "usr/local/bin"), { recursive: true });
    writeFileSync(join(machine.root, "usr/local/bin/wg-quick"), "#!/usr/bin/env bash\n");
    chmodSync(join(machine.root, "usr/local/bin/wg-quick"), 0o755);
    const run = join(machine.base, "run-wireguard");
    const calls: string[] = [];
    // wg-quick up as on a Mac: wireguard-go writes the name file, then listens on its socket.
    const runner: CommandRunner = async (argv) => {
      calls.push(argv.join(" "));
      if (argv.includes("up")) {
        mkdirSync(run, { recursive: true });
        writeFileSync(join(run, "bulwark.name"), "utun6\n");
        wireguardGo = Bun.listen({ unix: join(run, "utun6.sock"), socket: { data() {} } });
      }
      if (argv.includes("down")) wireguardGo?.stop(true);
      return { exitCode: 0, stdout: "", stderr: "" };
    };
    const result = await enforceMacosPolicy(request(policyWith({}), runner, { vpn: vpnSettings() }));
    const conf = join(machine.root, "usr/local/etc/wireguard/bulwark.conf");
    expect(statSync(conf).mode & 0o777).toBe(0o600);
    expect(readFileSync(conf, "utf8")).toContain(`PrivateKey = ${DEVICE_KEYS.privateKey}`);
    expect(calls).toContain(
      `/usr/bin/env PATH=/usr/local/bin:/usr/local/sbin:/usr/bin:/bin:/usr/sbin:/sbin /usr/local/bin/wg-quick up ${conf}`,
    );
    expect(result.broughtUp).toEqual({ ifindex: 6, boot_id: "utun6" });
    expect(result.results.find((entry) => entry.setting === "tunnel")?.outcome).toBe("enforced");
    // Another pass with the same settings: up, unchanged.
    const again = await enforceMacosPolicy(
      request(policyWith({}), runner, { vpn: vpnSettings(), broughtUp: result.broughtUp }),
    );
    expect(again.results.find((entry) => entry.setting === "tunnel")?.detail).toContain(
      "up, settings unchanged",
    );
    // A bulwark tunnel this agent did not bring up is left alone.
    const other = await enforceMacosPolicy(
      request(policyWith({}), runner, { vpn: vpnSettings(), broughtUp: null }),
    );
    expect(other.results.find((entry) => entry.setting === "tunnel")?.outcome).toBe("failed");

    // wireguard-go died: its name file stays in /var/run, but its socket went with it. The tunnel is
    // not up, whatever the name file says: wg-quick up again (as wg-quick itself would take it).
    wireguardGo?.stop(true);
    calls.length = 0;
    const died = await enforceMacosPolicy(
      request(policyWith({}), runner, { vpn: vpnSettings(), broughtUp: result.broughtUp }),
    );
    expect(died.results.find((entry) => entry.setting === "tunnel")?.detail).toContain(
      "brought up (wg-quick up)",
    );
    expect(calls.filter((call) => call.includes("wg-quick"))).toEqual([
      `/usr/bin/env PATH=/usr/local/bin:/usr/local/sbin:/usr/bin:/bin:/usr/sbin:/sbin /usr/local/bin/wg-quick up ${conf}`,
    ]);
    expect(died.broughtUp).toEqual({ ifindex: 6, boot_id: "utun6" });
    // A name file left from an earlier run beside another wireguard-go's socket of that utun (far newer):
    // not this tunnel either.
    utimesSync(join(run, "bulwark.name"), 1_700_000_000, 1_700_000_000);
    const reused = await enforceMacosPolicy(
      request(policyWith({}), runner, { vpn: vpnSettings(), broughtUp: result.broughtUp, dryRun: true }),
    );
    expect(reused.plan.find((entry) => entry.setting === "tunnel")?.tunnel).toEqual(["up"]);
  });
});
