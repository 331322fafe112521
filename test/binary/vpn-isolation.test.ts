/**
 * Organizations share one VPN server and stay apart on it. Four network namespaces: the server, and
 * devices A1 and A2 of one organization and B1 of another, each joined to the server's namespace by a
 * veth pair and each with a wireguard-go interface. The server is configured from the executable's
 * `bulwark vpn server-config` as wg-quick would do it (`wg-quick strip` + `wg setconf`, its Address, its
 * PostUp hook with %i replaced, checked first with `nft -c`), IPv4 forwarding on; each device from its
 * enrollment's wg_quick (its address and a route per AllowedIPs entry, as wg-quick adds them). Pings,
 * judged by their exit status: A1 reaches the server and A2 (the server forwards within an
 * organization), and a device that routes the whole pool (its owner can edit its configuration) reaches
 * across organizations until the server's rules are in, and no longer once they are. Needs root,
 * /dev/net/tun and nft.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildBinary, callServer as call, type RunningServer, startServer } from "../helpers/binary";
import { runTool, strippedFile } from "../helpers/wireguard";

const suffix = crypto.randomUUID().slice(0, 6);
const folder = mkdtempSync(join(tmpdir(), "bulwark-vpn-isolation-"));
const LISTEN_PORT = 40_000 + Math.floor(Math.random() * 20_000);
const SERVER_NS = `bw${suffix}-srv`;
const DEVICES = ["a1", "a2", "b1"] as const;
type DeviceName = (typeof DEVICES)[number];
const deviceNs = (device: DeviceName) => `bw${suffix}-${device}`;
/**
 * The WireGuard interface of a namespace: a name of its own, since wireguard-go's control socket
 * (/var/run/wireguard/<name>.sock, which `wg` talks to) is shared by all namespaces.
 */
const iface = (ns: string) => `bw${suffix}${ns.split("-").at(-1)}`;
const SERVER_IF = iface(SERVER_NS);
/** The server's underlay address, on its loopback, reached by every device through its own veth pair. */
const ENDPOINT_ADDRESS = "198.18.0.1";
const POOL = "10.213.0.0/16";
const SERVER_TUNNEL_ADDRESS = "10.213.0.1";
const ADMIN = { email: "isolation@example.com", password: "isolation-password-1" };
const OTHER = { email: "tenant-b@example.com", password: "tenant-b-password-1" };
const ENV = {
  BULWARK_ADMIN_EMAIL: ADMIN.email,
  BULWARK_ADMIN_PASSWORD: ADMIN.password,
  BULWARK_VPN_ENDPOINT: `${ENDPOINT_ADDRESS}:${LISTEN_PORT}`,
  BULWARK_VPN_ADDRESS_POOL: POOL,
  BULWARK_VPN_ORGANIZATION_PREFIX_LENGTH: "20",
};
const USERSPACE = { WG_I_PREFER_BUGGY_USERSPACE_TO_POLISHED_KMOD: "1" };
let binary: string;
let server: RunningServer | undefined;

/** Runs a command inside a namespace. */
function inNs(ns: string, command: string[], env: Record<string, string> = {}): string {
  return runTool(["ip", "netns", "exec", ns, ...command], env);
}

/** Whether `target` answers a ping from namespace `ns` through the tunnels: ping's exit status. */
function pings(ns: string, target: string): boolean {
  const result = Bun.spawnSync(
    ["ip", "netns", "exec", ns, "ping", "-n", "-q", "-c", "3", "-i", "0.2", "-W", "2", target],
    { stdout: "pipe", stderr: "pipe" },
  );
  return result.exitCode === 0;
}

/** The values of `key` in a wg-quick file, in order. */
function entries(wgQuick: string, key: string): string[] {
  return [...wgQuick.matchAll(new RegExp(`^${key} = (.*)$`, "gm"))].map((match) => match[1] ?? "");
}

/** A hook line of the server's as wg-quick runs it: `%i` is the interface's name, bash evaluates it. */
function runHook(hook: string): void {
  inNs(SERVER_NS, ["bash", "-c", hook.replaceAll("%i", SERVER_IF)]);
}

beforeAll(async () => {
  binary = await buildBinary();
}, 120_000);

afterAll(async () => {
  // Deleting an interface ends its wireguard-go; deleting a namespace removes its veth pair.
  for (const ns of [SERVER_NS, ...DEVICES.map(deviceNs)]) {
    Bun.spawnSync(["ip", "-n", ns, "link", "del", iface(ns)], { stderr: "pipe" });
    Bun.spawnSync(["ip", "netns", "del", ns], { stderr: "pipe" });
  }
  await server?.stop();
  rmSync(folder, { recursive: true, force: true });
});

test("a device reaches the server and its own organization's devices through the tunnel, and never another organization's", async () => {
  server = await startServer(binary, folder, ENV);
  const running = server;
  const enroll = async (token: string, name: string) => {
    const enrollment = await call(running, "POST", "/api/v1/enrollment-tokens", token, {});
    return call(running, "POST", "/api/v1/devices/enroll", undefined, {
      enrollment_token: enrollment.token,
      device_name: name,
      platform: "linux",
      agent_version: "1.0.0",
      hardware_id: `hw-${name}-${suffix}`,
    });
  };
  // A1 enrolls while its organization is the only one; the second one replaces the server's key, which
  // A1 learns at its next check-in, as its agent would.
  const a = await call(running, "POST", "/api/v1/auth/login", undefined, ADMIN);
  const a1 = await enroll(a.token, "a1");
  const created = Bun.spawnSync(
    [binary, "admin", "create", "--email", OTHER.email, "--password", OTHER.password, "--org", "B"],
    { cwd: folder, env: { PATH: process.env.PATH ?? "", ...ENV }, stdout: "pipe", stderr: "pipe" },
  );
  expect({ code: created.exitCode, stderr: created.stderr.toString() }).toMatchObject({ code: 0 });
  const checkedIn = await call(running, "POST", "/api/v1/agent/checkin", a1.device_token, {});
  expect(checkedIn.vpn_config.server_public_key).not.toBe(a1.vpn_config.server_public_key);
  const a2 = await enroll(a.token, "a2");
  const b = await call(running, "POST", "/api/v1/auth/login", undefined, OTHER);
  const b1 = await enroll(b.token, "b1");
  const wgQuick: Record<DeviceName, string> = {
    a1: a1.vpn_config.wg_quick.replace(
      `PublicKey = ${a1.vpn_config.server_public_key}`,
      `PublicKey = ${checkedIn.vpn_config.server_public_key}`,
    ),
    a2: a2.vpn_config.wg_quick,
    b1: b1.vpn_config.wg_quick,
  };
  const address: Record<DeviceName, string> = {
    a1: a1.vpn_config.address.replace("/32", ""),
    a2: a2.vpn_config.address.replace("/32", ""),
    b1: b1.vpn_config.address.replace("/32", ""),
  };
  expect(address).toEqual({ a1: "10.213.0.2", a2: "10.213.0.3", b1: "10.213.16.1" });

  const exported = Bun.spawnSync([binary, "vpn", "server-config"], {
    cwd: folder,
    env: { PATH: process.env.PATH ?? "", ...ENV },
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(exported.exitCode).toBe(0);
  const serverConf = exported.stdout.toString();
  const [postUp] = entries(serverConf, "PostUp");
  const [postDown] = entries(serverConf, "PostDown");
  if (!postUp || !postDown) throw new Error(`no PostUp/PostDown in the export:\n${serverConf}`);

  // The underlay: the server's namespace, and each device's joined to it by a veth pair.
  runTool(["ip", "netns", "add", SERVER_NS]);
  runTool(["ip", "-n", SERVER_NS, "link", "set", "lo", "up"]);
  runTool(["ip", "-n", SERVER_NS, "address", "add", `${ENDPOINT_ADDRESS}/32`, "dev", "lo"]);
  DEVICES.forEach((device, index) => {
    const ns = deviceNs(device);
    const link = `v${suffix}${index}`;
    runTool(["ip", "netns", "add", ns]);
    runTool(["ip", "-n", ns, "link", "set", "lo", "up"]);
    runTool([
      "ip",
      "link",
      "add",
      link,
      "netns",
      SERVER_NS,
      "type",
      "veth",
      "peer",
      "name",
      "under",
      "netns",
      ns,
    ]);
    runTool(["ip", "-n", SERVER_NS, "address", "add", `198.18.${index + 1}.1/24`, "dev", link]);
    runTool(["ip", "-n", SERVER_NS, "link", "set", link, "up"]);
    runTool(["ip", "-n", ns, "address", "add", `198.18.${index + 1}.2/24`, "dev", "under"]);
    runTool(["ip", "-n", ns, "link", "set", "under", "up"]);
    runTool(["ip", "-n", ns, "route", "add", `${ENDPOINT_ADDRESS}/32`, "via", `198.18.${index + 1}.1`]);
  });

  // The server, from the operator's export, forwarding on but its hook not yet run.
  inNs(SERVER_NS, ["sysctl", "-q", "-w", "net.ipv4.ip_forward=1"]);
  inNs(SERVER_NS, ["wireguard-go", SERVER_IF], USERSPACE);
  inNs(SERVER_NS, ["wg", "setconf", SERVER_IF, strippedFile(folder, "server", serverConf)]);
  const [serverAddress] = entries(serverConf, "Address");
  expect(serverAddress).toBe(`${SERVER_TUNNEL_ADDRESS}/16`);
  runTool(["ip", "-n", SERVER_NS, "address", "add", serverAddress ?? "", "dev", SERVER_IF]);
  runTool(["ip", "-n", SERVER_NS, "link", "set", SERVER_IF, "up"]);

  // Each device, from its own wg_quick.
  for (const device of DEVICES) {
    const ns = deviceNs(device);
    const name = iface(ns);
    inNs(ns, ["wireguard-go", name], USERSPACE);
    inNs(ns, ["wg", "setconf", name, strippedFile(folder, device, wgQuick[device])]);
    runTool(["ip", "-n", ns, "address", "add", entries(wgQuick[device], "Address")[0] ?? "", "dev", name]);
    runTool(["ip", "-n", ns, "link", "set", name, "up"]);
    for (const allowed of (entries(wgQuick[device], "AllowedIPs")[0] ?? "").split(", "))
      runTool(["ip", "-n", ns, "route", "add", allowed, "dev", name]);
  }
  const a1Ns = deviceNs("a1");
  const b1Ns = deviceNs("b1");
  expect(pings(a1Ns, SERVER_TUNNEL_ADDRESS)).toBe(true);
  expect(pings(deviceNs("b1"), SERVER_TUNNEL_ADDRESS)).toBe(true);
  // Within an organization, the server forwards.
  expect(pings(a1Ns, address.a2)).toBe(true);
  expect(pings(deviceNs("a2"), address.a1)).toBe(true);
  // B1's own settings do not route A's subnet; its owner can change that. Without the server's rules,
  // a device that routes the whole pool reaches the other organization's devices.
  for (const device of ["a1", "b1"] as const) {
    const ns = deviceNs(device);
    const name = iface(ns);
    const serverKey = inNs(ns, ["wg", "show", name, "peers"]).trim();
    inNs(ns, ["wg", "set", name, "peer", serverKey, "allowed-ips", POOL]);
    inNs(ns, ["ip", "route", "replace", POOL, "dev", name]);
  }
  expect(pings(b1Ns, address.a1)).toBe(true);

  // The server's hook, checked by nft first, then run as wg-quick runs it.
  const script = /^nft '(.*)'$/.exec(postUp)?.[1];
  if (!script) throw new Error(`PostUp is not one nft command: ${postUp}`);
  const scriptFile = join(folder, "rules.nft");
  writeFileSync(scriptFile, script.replaceAll("%i", SERVER_IF));
  inNs(SERVER_NS, ["nft", "-c", "-f", scriptFile]);
  runHook(postUp);
  expect(inNs(SERVER_NS, ["nft", "list", "table", "inet", `bulwark_${SERVER_IF}`])).toContain(
    `ip saddr 10.213.16.0/20 ip daddr 10.213.16.0/20 accept`,
  );
  expect(pings(b1Ns, address.a1)).toBe(false);
  expect(pings(a1Ns, address.b1)).toBe(false);
  // The server itself, and one organization's own devices, are reached as before.
  expect(pings(b1Ns, SERVER_TUNNEL_ADDRESS)).toBe(true);
  expect(pings(a1Ns, SERVER_TUNNEL_ADDRESS)).toBe(true);
  expect(pings(a1Ns, address.a2)).toBe(true);
  // Run again (after a new organization), the hook replaces the table; PostDown removes it.
  runHook(postUp);
  expect(pings(b1Ns, address.a1)).toBe(false);
  runHook(postDown);
  expect(inNs(SERVER_NS, ["nft", "list", "tables"])).not.toContain(`bulwark_${SERVER_IF}`);
}, 120_000);
