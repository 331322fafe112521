/** Temporary ROOT trees, a permissive policy, VPN settings and a recording command runner for the enforcement tests. */
import { createHash } from "node:crypto";
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CommandRunner } from "../../../src/agent/enforce/apply";
import { enforcePolicy } from "../../../src/agent/enforce/enforce";
import type { VpnSettings } from "../../../src/agent/enforce/render-wireguard";
import type { InterfaceIdentity } from "../../../src/agent/enforce/tunnel-interface";
import type { PolicyData } from "../../../src/domain/policies/policy-document";
import { generateWireGuardKeyPair } from "../../../src/lib/wireguard";

/** A policy that restricts nothing the agent writes a file for. */
export function permissivePolicy(): PolicyData {
  return {
    dlp: {
      clipboard_sharing: true,
      clipboard_direction: "both",
      screenshot_allowed: true,
      print_allowed: true,
      sensitive_data_patterns: [],
    },
    network: {
      vpn_required: false,
      vpn_always_on: false,
      allowed_domains: [],
      blocked_domains: [],
      split_tunnel: true,
    },
    usb: { allowed: true, whitelist: [], allowed_classes: [], audit_only: false },
    storage: {
      encryption_required: false,
      external_storage_allowed: true,
      cloud_sync_allowed: true,
      max_file_size_mb: 0,
    },
  };
}

/** The permissive policy with some sections' settings replaced. */
export function policyWith(changes: { [S in keyof PolicyData]?: Partial<PolicyData[S]> }): PolicyData {
  const base = permissivePolicy();
  return {
    dlp: { ...base.dlp, ...changes.dlp },
    network: { ...base.network, ...changes.network },
    usb: { ...base.usb, ...changes.usb },
    storage: { ...base.storage, ...changes.storage },
  };
}

export const DEVICE_KEYS = generateWireGuardKeyPair();
export const SERVER_KEYS = generateWireGuardKeyPair();

export function vpnSettings(changes: Partial<VpnSettings> = {}): VpnSettings {
  return {
    endpoint: "vpn.example.com:51820",
    address: "10.100.0.2/32",
    server_public_key: SERVER_KEYS.publicKey,
    allowed_ips: ["10.100.0.0/16"],
    dns: ["10.100.0.1"],
    persistent_keepalive: 25,
    ...changes,
  };
}

/** The /etc/hosts of a machine before enrollment: the user's own lines, no final line break. */
export const USER_HOSTS =
  "127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost\n# my printer\n192.168.1.20 printer.lan";

/** One enforcement target of these tests, and the tunnel interface its passes brought up (as status.json keeps it). */
export interface TestMachine {
  root: string;
  stateDir: string;
  base: string;
  broughtUp: InterfaceIdentity | null;
  cleanup: () => void;
}

/** A temporary machine (ROOT with the usual /etc and the user's hosts file) and a state folder beside it. */
export function makeMachine(): TestMachine {
  const base = mkdtempSync(join(tmpdir(), "bulwark-enforce-"));
  const root = join(base, "root");
  mkdirSync(join(root, "etc/modprobe.d"), { recursive: true });
  writeFileSync(join(root, "etc/hosts"), USER_HOSTS, { mode: 0o644 });
  writeFileSync(join(root, "etc/modprobe.d/blacklist.conf"), "blacklist pcspkr\n", { mode: 0o644 });
  writeFileSync(join(root, "etc/hostname"), "laptop\n", { mode: 0o644 });
  return {
    root,
    stateDir: join(base, "state"),
    base,
    broughtUp: null,
    cleanup: () => rmSync(base, { recursive: true, force: true }),
  };
}

/** Every entry under `folder`: its path, kind, permission bits and content digest (or link target). */
export function treeListing(folder: string): string[] {
  const lines: string[] = [];
  const visit = (path: string, relative: string) => {
    const stat = lstatSync(path);
    const mode = (stat.mode & 0o7777).toString(8);
    if (stat.isSymbolicLink()) lines.push(`${relative} link ${readlinkSync(path)}`);
    else if (stat.isDirectory()) {
      lines.push(`${relative}/ dir ${mode}`);
      for (const name of readdirSync(path).sort()) visit(join(path, name), `${relative}/${name}`);
    } else
      lines.push(`${relative} file ${mode} ${createHash("sha256").update(readFileSync(path)).digest("hex")}`);
  };
  visit(folder, "");
  return lines;
}

/** A command runner that records each command and succeeds (or fails the commands `failing` names). */
export function recordingRunner(failing: string[] = []): { runner: CommandRunner; calls: string[] } {
  const calls: string[] = [];
  const runner: CommandRunner = async (argv) => {
    const call = argv.join(" ");
    calls.push(call);
    const fails = failing.some((part) => call.includes(part));
    return {
      exitCode: fails ? 1 : 0,
      stdout: argv[1] === "strip" ? "[Interface]\n" : "",
      stderr: fails ? "refused" : "",
    };
  };
  return { runner, calls };
}

let lastInterfaceIndex = 100;

/** Where these tests' stand-in for the running kernel lists its interfaces: beside ROOT, not in it. */
export function interfacesOf(machine: TestMachine): string {
  return join(machine.base, "kernel/sys/class/net");
}

/**
 * Stands in for the running kernel in `interfacesOf(machine)`: a `wg-quick up` that succeeds makes the
 * `bulwark` interface there with a new index, a `wg-quick down` removes it.
 */
function withStandInKernel(machine: TestMachine, runner: CommandRunner): CommandRunner {
  const folder = join(interfacesOf(machine), "bulwark");
  return async (argv, stdin) => {
    const result = await runner(argv, stdin);
    if (result.exitCode !== 0 || argv[0] !== "wg-quick") return result;
    if (argv[1] === "up") {
      mkdirSync(folder, { recursive: true });
      writeFileSync(join(folder, "ifindex"), `${++lastInterfaceIndex}\n`);
    } else if (argv[1] === "down") rmSync(folder, { recursive: true, force: true });
    return result;
  };
}

/**
 * One enforcement pass on `machine` (tunnel commands recorded, never run); the tunnel's interface is
 * looked for in the stand-in kernel's `interfacesOf(machine)`, and the one the pass brought up is kept
 * in `machine.broughtUp` for the next.
 */
export async function enforce(
  machine: TestMachine,
  policy: PolicyData,
  extra: { vpn?: VpnSettings | null; dryRun?: boolean; runner?: CommandRunner; noTunnel?: boolean } = {},
) {
  const result = await enforcePolicy({
    root: machine.root,
    stateDir: machine.stateDir,
    policy,
    vpn: extra.vpn ?? null,
    facts: {},
    options: { noTunnel: extra.noTunnel ?? false, wireGuardPrivateKey: DEVICE_KEYS.privateKey },
    dryRun: extra.dryRun ?? false,
    runner: withStandInKernel(machine, extra.runner ?? recordingRunner().runner),
    interfaces: interfacesOf(machine),
    broughtUp: machine.broughtUp,
  });
  machine.broughtUp = result.broughtUp;
  return result;
}

/** The outcome and detail reported for `setting`. */
export function resultOf(results: { setting: string; outcome: string; detail: string }[], setting: string) {
  const found = results.find((result) => result.setting === setting);
  if (!found) throw new Error(`no result for ${setting}`);
  return found;
}
