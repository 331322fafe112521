/**
 * The device agent brings its WireGuard tunnel up for real. A `bulwark serve` on this machine; the VPN
 * server in a network namespace of its own, configured by `wg-quick up` from `bulwark vpn server-config`;
 * the device in another, joined to the server's by a veth pair, reaching the API through a socat relay
 * (a Unix socket crosses namespaces). There the agent enrolls, and `agent run --once` (without
 * --no-tunnel) writes ROOT/etc/wireguard/bulwark.conf and runs `wg-quick up` on it, which falls back to
 * wireguard-go (no kernel module needed). Pings go through; the server's wg shows the device's
 * handshake; the next check-in reports vpn_connected; `agent plan` and status describe it as it is; another
 * enrollment on the same kernel leaves it alone; `agent unenroll` takes the interface down and gives ROOT
 * back as it was. Nothing in this machine's own namespace is routed differently. Needs root,
 * /dev/net/tun, wireguard-go, wg-quick, nft and socat.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildMachine, OS_RELEASES, ROOT_DEVICES, removeMachines, snapshot } from "../helpers/agent-machine";
import { buildBinary, callServer, type RunningServer, runCommand, startServer } from "../helpers/binary";
import { wgPubkey } from "../helpers/wireguard";

const suffix = crypto.randomUUID().slice(0, 6);
const folder = mkdtempSync(join(tmpdir(), "bulwark-agent-tunnel-"));
const SERVER_NS = `bwt${suffix}-srv`;
const DEVICE_NS = `bwt${suffix}-dev`;
const SERVER_IF = `bwt${suffix}s`;
/** The interface wg-quick names after the agent's file, ROOT/etc/wireguard/bulwark.conf. */
const DEVICE_IF = "bulwark";
/**
 * wireguard-go's control sockets (/run/wireguard/<interface>.sock, which `wg` talks to) are files, shared
 * by every namespace: inside the test's namespaces /run/wireguard is this folder, so that the device's
 * `bulwark` meets no other on this machine.
 */
const SOCKETS = join(folder, "wireguard-sockets");
const LISTEN_PORT = 40_000 + Math.floor(Math.random() * 20_000);
/** The VPN server's underlay address, on its end of the veth pair. */
const ENDPOINT_ADDRESS = "198.18.0.1";
const SERVER_TUNNEL_ADDRESS = "10.215.0.1";
/**
 * Where the agent finds the API from the device's namespace: across the veth pair, on the server's
 * namespace's address (a relay there), as a laptop reaches a server over a network. Plain http across a
 * network is refused unless the agent is told --insecure-http.
 */
const DEVICE_API = `http://${ENDPOINT_ADDRESS}:8000`;
const ADMIN = { email: "tunnel-admin@example.com", password: "correct-horse-battery" };
const ENV = {
  BULWARK_ADMIN_EMAIL: ADMIN.email,
  BULWARK_ADMIN_PASSWORD: ADMIN.password,
  BULWARK_AUTH_PASSWORD_HASH_MEMORY_KIB: "64",
  BULWARK_AUTH_PASSWORD_HASH_ITERATIONS: "1",
  BULWARK_VPN_ENDPOINT: `${ENDPOINT_ADDRESS}:${LISTEN_PORT}`,
  // A pool of its own; no DNS in the tunnel (wg-quick would need resolvconf for it).
  BULWARK_VPN_ADDRESS_POOL: "10.215.0.0/24",
};

let binary: string;
let server: RunningServer | undefined;
let adminToken: string;
const relays: ReturnType<typeof Bun.spawn>[] = [];

/** `ip netns exec` gives each command a mount namespace of its own: there, /run/wireguard is SOCKETS. */
const WITH_OWN_SOCKETS = ["sh", "-c", 'mount --bind "$0" /run/wireguard && exec "$@"', SOCKETS];

/** Runs a command in namespace `ns` (with the test's own /run/wireguard): its exit code and output. */
function inNs(ns: string, command: string[]) {
  const result = Bun.spawnSync(["ip", "netns", "exec", ns, ...WITH_OWN_SOCKETS, ...command], {
    cwd: folder,
    env: { PATH: process.env.PATH ?? "", HOME: folder },
    stdout: "pipe",
    stderr: "pipe",
  });
  return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() };
}

/** `inNs` for a command that must succeed: its standard output. */
function mustInNs(ns: string, command: string[]): string {
  const result = inNs(ns, command);
  if (result.code !== 0)
    throw new Error(`${command.join(" ")} in ${ns} failed (${result.code}): ${result.stderr}`);
  return result.stdout;
}

/** A command (words without spaces) run here, in this machine's own namespace, that must succeed. */
function must(command: string): void {
  const result = Bun.spawnSync(command.split(" "), { stdout: "pipe", stderr: "pipe" });
  if (result.exitCode !== 0) throw new Error(`${command} failed: ${result.stderr.toString()}`);
}

/** Whether the server's tunnel address answers a ping from the device: ping's exit status, a few tries. */
function devicePingsServer(): boolean {
  const ping = `ping -n -q -c 3 -i 0.2 -W 2 ${SERVER_TUNNEL_ADDRESS}`.split(" ");
  for (let attempt = 0; attempt < 5; attempt++) if (inNs(DEVICE_NS, ping).code === 0) return true;
  return false;
}

/** Waits until `ready` holds (a relay listening), or throws `what`. */
async function waitFor(what: string, ready: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!ready()) {
    if (Date.now() > deadline) throw new Error(`${what} did not start`);
    await Bun.sleep(50);
  }
}

beforeAll(async () => {
  binary = await buildBinary();
  server = await startServer(binary, folder, ENV);
  adminToken = (await callServer(server, "POST", "/api/v1/auth/login", undefined, ADMIN)).token;
  mkdirSync(SOCKETS);
  mkdirSync("/run/wireguard", { recursive: true });

  // The underlay: the server's namespace and the device's, joined by a veth pair.
  const link = `vt${suffix}`;
  must(`ip netns add ${SERVER_NS}`);
  must(`ip netns add ${DEVICE_NS}`);
  must(`ip -n ${SERVER_NS} link set lo up`);
  must(`ip -n ${DEVICE_NS} link set lo up`);
  must(`ip link add ${link} netns ${SERVER_NS} type veth peer name under netns ${DEVICE_NS}`);
  must(`ip -n ${SERVER_NS} address add ${ENDPOINT_ADDRESS}/24 dev ${link}`);
  must(`ip -n ${SERVER_NS} link set ${link} up`);
  must(`ip -n ${DEVICE_NS} address add 198.18.0.2/24 dev under`);
  must(`ip -n ${DEVICE_NS} link set under up`);

  // The API, relayed into the device's namespace through a Unix socket.
  const api = new URL(server.url);
  const socket = join(folder, "api.sock");
  relays.push(
    Bun.spawn(["socat", `UNIX-LISTEN:${socket},fork`, `TCP:${api.hostname}:${api.port}`], {
      stderr: "inherit",
    }),
  );
  await waitFor("the relay's socket", () => Bun.spawnSync(["test", "-S", socket]).exitCode === 0);
  const networkRelay = `socat TCP-LISTEN:8000,bind=${ENDPOINT_ADDRESS},fork,reuseaddr UNIX-CONNECT:${socket}`;
  relays.push(
    Bun.spawn(["ip", "netns", "exec", SERVER_NS, ...networkRelay.split(" ")], { stderr: "inherit" }),
  );
  await waitFor("the server's relay", () => inNs(SERVER_NS, ["ss", "-Hltn", "sport = :8000"]).stdout !== "");
}, 120_000);

afterAll(async () => {
  for (const relay of relays) {
    relay.kill();
    await relay.exited;
  }
  // Deleting an interface ends its wireguard-go; a process still in a namespace is one this test started.
  for (const [ns, iface] of [
    [DEVICE_NS, DEVICE_IF],
    [SERVER_NS, SERVER_IF],
  ] as const) {
    Bun.spawnSync(["ip", "-n", ns, "link", "del", iface], { stderr: "pipe" });
    const pids = Bun.spawnSync(["ip", "netns", "pids", ns], {
      stdout: "pipe",
      stderr: "pipe",
    }).stdout.toString();
    for (const pid of pids.split(/\s+/).filter(Boolean)) {
      try {
        process.kill(Number(pid), "SIGKILL");
      } catch {
        // It ended meanwhile.
      }
    }
    Bun.spawnSync(["ip", "netns", "del", ns], { stderr: "pipe" });
  }
  await server?.stop();
  rmSync(folder, { recursive: true, force: true });
  removeMachines();
});

test("agent run brings the tunnel up through wg-quick, traffic and handshakes cross it, the server hears vpn_connected, and unenroll takes it down", async () => {
  const running = server;
  if (!running) throw new Error("beforeAll starts the server");
  const root = buildMachine(OS_RELEASES.debian, ...ROOT_DEVICES.luks, {
    files: {
      "etc/hostname": "tunnel-laptop\n",
      "etc/machine-id": `${crypto.randomUUID().replaceAll("-", "")}\n`,
      "etc/hosts": "127.0.0.1 localhost\n",
    },
  });
  const stateDir = join(folder, "state");
  const before = snapshot(root);
  const agent = (...args: string[]) =>
    inNs(DEVICE_NS, [binary, "agent", ...args, "--root", root, "--state-dir", stateDir]);

  const { token } = await callServer(running, "POST", "/api/v1/enrollment-tokens", adminToken, {});
  // Plain http across the network: refused as it stands, taken when the administrator says so.
  const refused = agent("enroll", "--server", DEVICE_API, "--token", token);
  expect(refused.code).toBe(2);
  expect(refused.stderr).toContain("is plain http");
  const enrolled = agent("enroll", "--server", DEVICE_API, "--token", token, "--insecure-http");
  expect({ code: enrolled.code, stderr: enrolled.stderr }).toMatchObject({ code: 0 });
  expect(enrolled.stderr).toContain(`Warning: ${DEVICE_API} is plain http (--insecure-http)`);
  const deviceId = enrolled.stdout.trim();
  const devicePublicKey = wgPubkey(readFileSync(join(stateDir, "wg.key"), "utf8").trim());

  // The operator exports the server's configuration (the device is a peer now) and brings it up.
  const exported = runCommand(binary, ["vpn", "server-config"], folder, ENV);
  expect({ code: exported.code, stderr: exported.stderr }).toMatchObject({ code: 0 });
  expect(exported.stdout).toContain(`PublicKey = ${devicePublicKey}`);
  const serverConf = join(folder, `${SERVER_IF}.conf`);
  writeFileSync(serverConf, exported.stdout, { mode: 0o600 });
  mustInNs(SERVER_NS, ["wg-quick", "up", serverConf]);

  const startedAt = Math.floor(Date.now() / 1000);
  const first = agent("run", "--once");
  expect({ code: first.code, stderr: first.stderr }).toMatchObject({ code: 0 });
  // The cycle that brought the tunnel up reports it as it is then: connected, with the vpn_required row
  // read from that fact (before, both said "not connected" until the next interval).
  const reported = await callServer(running, "GET", `/api/v1/devices/${deviceId}`, adminToken);
  expect(reported.facts.vpn_connected).toBe(true);
  expect(reported.enforcement.settings).toContainEqual({
    setting: "network.vpn_required",
    outcome: "reported",
    detail: "required; vpn_connected=true",
  });
  expect(reported.compliance.violations.map((violation: { rule: string }) => violation.rule)).not.toContain(
    "network.vpn_required",
  );
  // `facts` says what the next check-in sends: the tunnel read where run reads it, whatever ROOT is.
  expect(JSON.parse(agent("facts", "--json").stdout).facts.vpn_connected).toBe(true);
  expect(readFileSync(join(root, "etc/wireguard/bulwark.conf"), "utf8")).toContain(
    `Endpoint = ${ENDPOINT_ADDRESS}:${LISTEN_PORT}`,
  );
  expect(inNs(DEVICE_NS, ["ip", "link", "show", DEVICE_IF]).code).toBe(0);
  expect(devicePingsServer()).toBe(true);
  const handshakes = mustInNs(SERVER_NS, ["wg", "show", SERVER_IF, "latest-handshakes"]);
  const handshake = new RegExp(`^${devicePublicKey.replace(/[+/]/g, "\\$&")}\\t(\\d+)$`, "m").exec(
    handshakes,
  );
  expect(Number(handshake?.[1] ?? 0)).toBeGreaterThanOrEqual(startedAt);

  // plan describes the tunnel as the kernel has it; so does a cycle that leaves the tunnel alone.
  const planned = JSON.parse(agent("plan", "--json").stdout);
  expect(planned.settings).toContainEqual(
    expect.objectContaining({
      setting: "tunnel",
      detail: expect.stringMatching(/: up, settings unchanged$/),
    }),
  );
  const quiet = agent("run", "--once", "--no-tunnel");
  expect({ code: quiet.code, stderr: quiet.stderr }).toMatchObject({ code: 0 });
  expect(JSON.parse(agent("status", "--json").stdout).enforcement).toContainEqual(
    expect.objectContaining({
      setting: "tunnel",
      detail: expect.stringMatching(/; brought up earlier, left as it is \(--no-tunnel\)$/),
    }),
  );

  // Another enrollment on this kernel (another ROOT and state folder) finds the interface and leaves it alone.
  const otherRoot = buildMachine(OS_RELEASES.debian, {
    files: {
      "etc/hostname": "tunnel-other\n",
      "etc/machine-id": `${crypto.randomUUID().replaceAll("-", "")}\n`,
    },
  });
  const otherState = join(folder, "other-state");
  const other = (...args: string[]) =>
    inNs(DEVICE_NS, [binary, "agent", ...args, "--root", otherRoot, "--state-dir", otherState]);
  const otherToken = (await callServer(running, "POST", "/api/v1/enrollment-tokens", adminToken, {})).token;
  expect(other("enroll", "--server", DEVICE_API, "--token", otherToken, "--insecure-http").code).toBe(0);
  const otherRun = other("run", "--once");
  expect(otherRun.code, otherRun.stderr).toBe(5);
  expect(otherRun.stderr).toContain("1 setting failed: tunnel (bulwark to 198.18.0.1:");
  expect(otherRun.stderr).toContain(
    "is not brought up: an interface named bulwark exists that this agent did not bring up: it is left alone",
  );
  const otherGone = other("unenroll");
  expect({ code: otherGone.code, stderr: otherGone.stderr }).toMatchObject({ code: 0 });
  expect(otherGone.stderr).toContain(
    "an interface named bulwark exists that this agent did not bring up: left as it is",
  );
  expect(devicePingsServer()).toBe(true);

  // The next cycle finds the tunnel up (nothing to redo) and reports it connected; started with a PATH
  // that has no program folder (as cron or a bare sudo may start it), it finds wg in the system's.
  const second = inNs(DEVICE_NS, [
    "env",
    "PATH=/nonexistent",
    binary,
    "agent",
    "run",
    "--once",
    "--root",
    root,
    "--state-dir",
    stateDir,
  ]);
  expect({ code: second.code, stderr: second.stderr }).toMatchObject({ code: 0 });
  const device = await callServer(running, "GET", `/api/v1/devices/${deviceId}`, adminToken);
  expect(device.facts.vpn_connected).toBe(true);
  const status = JSON.parse(agent("status", "--json").stdout);
  expect(status.enforcement).toContainEqual({
    setting: "tunnel",
    outcome: "enforced",
    detail: `bulwark to ${ENDPOINT_ADDRESS}:${LISTEN_PORT} as ${status.tunnel.address}: up, settings unchanged`,
  });

  const unenrolled = agent("unenroll");
  expect({ code: unenrolled.code, stderr: unenrolled.stderr }).toMatchObject({ code: 0 });
  expect(inNs(DEVICE_NS, ["ip", "link", "show", DEVICE_IF]).code).not.toBe(0);
  expect(snapshot(root)).toEqual(before);
  const gone = await fetch(`${running.url}/api/v1/devices/${deviceId}`, {
    headers: { authorization: `Bearer ${adminToken}` },
  });
  expect(gone.status).toBe(404);
}, 120_000);
