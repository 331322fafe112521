/**
 * The tunnel comes up: two real WireGuard interfaces (wireguard-go, configured by `wg setconf` with
 * what `wg-quick strip` makes of Bulwark's two wg-quick files) complete a handshake, the server's from
 * GET /vpn/server-config and the device's from its enrollment. Against the built executable; the
 * server's key pair survives a restart. Needs root and /dev/net/tun, as wireguard-go does.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { createSocket } from "node:dgram";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildBinary, callServer as call, type RunningServer, startServer } from "../helpers/binary";
import { runTool, strippedFile, wgPubkey } from "../helpers/wireguard";

const ADMIN = { email: "wg@example.com", password: "wireguard-password-1" };
const folder = mkdtempSync(join(tmpdir(), "bulwark-wg-tunnel-"));
const LISTEN_PORT = 40_000 + Math.floor(Math.random() * 20_000);
const suffix = crypto.randomUUID().slice(0, 6);
const SERVER_IF = `bws${suffix}`;
const DEVICE_IF = `bwd${suffix}`;
const ENV = {
  BULWARK_ADMIN_EMAIL: ADMIN.email,
  BULWARK_ADMIN_PASSWORD: ADMIN.password,
  BULWARK_VPN_ENDPOINT: `127.0.0.1:${LISTEN_PORT}`,
  // A pool of its own, so that the test routes nothing the machine uses; two organizations' /25s.
  BULWARK_VPN_ADDRESS_POOL: "10.213.77.0/24",
  BULWARK_VPN_ORGANIZATION_PREFIX_LENGTH: "25",
};
let binary: string;
const servers: RunningServer[] = [];
/** The first test's device, of the first organization. */
let firstDevice: { device_token: string; vpn_config: { server_public_key: string; address: string } };

function latestHandshake(iface: string): number {
  const line = runTool(["wg", "show", iface, "latest-handshakes"]).trim();
  return Number(line.split(/\s+/)[1] ?? 0);
}

beforeAll(async () => {
  binary = await buildBinary();
}, 120_000);

afterAll(async () => {
  for (const iface of [SERVER_IF, DEVICE_IF]) Bun.spawnSync(["ip", "link", "del", iface], { stderr: "pipe" });
  for (const server of servers) await server.stop();
  rmSync(folder, { recursive: true, force: true });
});

test("a device's tunnel comes up from the config it received, to the server Bulwark configured", async () => {
  const server = await startServer(binary, folder, ENV);
  servers.push(server);
  const { token } = await call(server, "POST", "/api/v1/auth/login", undefined, ADMIN);
  const enrollment = await call(server, "POST", "/api/v1/enrollment-tokens", token, {});
  const enrolled = await call(server, "POST", "/api/v1/devices/enroll", undefined, {
    enrollment_token: enrollment.token,
    device_name: "Tunnel laptop",
    platform: "linux",
    agent_version: "1.0.0",
    hardware_id: `hw-${suffix}`,
  });
  firstDevice = enrolled;
  const vpn = enrolled.vpn_config;
  const serverConfig = await call(server, "GET", "/api/v1/vpn/server-config", token);
  expect(serverConfig.listen_port).toBe(LISTEN_PORT);
  expect(wgPubkey(vpn.private_key)).toBe(vpn.public_key);

  // Two userspace WireGuard interfaces on this machine, configured by wg itself from our files.
  const userspace = { WG_I_PREFER_BUGGY_USERSPACE_TO_POLISHED_KMOD: "1" };
  runTool(["wireguard-go", SERVER_IF], userspace);
  runTool(["wireguard-go", DEVICE_IF], userspace);
  runTool(["wg", "setconf", SERVER_IF, strippedFile(folder, "server", serverConfig.wg_quick)]);
  runTool(["wg", "setconf", DEVICE_IF, strippedFile(folder, "device", vpn.wg_quick)]);
  expect(runTool(["wg", "show", SERVER_IF, "public-key"]).trim()).toBe(serverConfig.server_public_key);
  expect(runTool(["wg", "show", SERVER_IF, "peers"]).trim()).toBe(vpn.public_key);
  expect(runTool(["wg", "show", DEVICE_IF, "endpoints"]).trim()).toBe(
    `${serverConfig.server_public_key}\t127.0.0.1:${LISTEN_PORT}`,
  );

  // The device's address on its interface, and a route to the server's tunnel address through it
  // (not wg-quick up: its routes for AllowedIPs would take over this machine's traffic).
  const serverAddress = serverConfig.address.split("/")[0];
  runTool(["ip", "address", "add", vpn.address, "dev", DEVICE_IF]);
  runTool(["ip", "link", "set", "up", "dev", DEVICE_IF]);
  runTool(["ip", "link", "set", "up", "dev", SERVER_IF]);
  runTool(["ip", "route", "add", `${serverAddress}/32`, "dev", DEVICE_IF]);

  // The device's keepalive, or a packet into the tunnel, starts the handshake; both ends record it.
  const socket = createSocket("udp4");
  const deadline = Date.now() + 15_000;
  while (latestHandshake(SERVER_IF) === 0 || latestHandshake(DEVICE_IF) === 0) {
    if (Date.now() > deadline) throw new Error(`no handshake:\n${runTool(["wg", "show", "all"])}`);
    socket.send("hello", 9, serverAddress);
    await Bun.sleep(200);
  }
  socket.close();
  expect(latestHandshake(SERVER_IF)).toBeGreaterThan(0);
  const transfer = runTool(["wg", "show", SERVER_IF, "transfer"]).trim().split(/\s+/);
  expect(Number(transfer[1])).toBeGreaterThan(0);
}, 60_000);

test("the server's key pair survives a restart: devices and the export keep the same key", async () => {
  const before = servers[0];
  if (!before) throw new Error("the first test starts the server");
  const { token } = await call(before, "POST", "/api/v1/auth/login", undefined, ADMIN);
  const first = await call(before, "GET", "/api/v1/vpn/server-config", token);
  await before.stop();
  const after = await startServer(binary, folder, ENV);
  servers.push(after);
  // A new port is a new issuer (base_url follows it): sign in again.
  const session = await call(after, "POST", "/api/v1/auth/login", undefined, ADMIN);
  const again = await call(after, "GET", "/api/v1/vpn/server-config", session.token);
  expect(again.server_public_key).toBe(first.server_public_key);
  expect(again.wg_quick).toBe(first.wg_quick);
}, 60_000);

test("a second organization replaces the server key (admin create says so, devices learn it at check-in); its admins export only their peers; the operator's CLI exports all, with the new key", async () => {
  const server = servers.at(-1);
  if (!server) throw new Error("the first test starts the server");
  const env = { PATH: process.env.PATH ?? "", ...ENV };
  const created = Bun.spawnSync(
    [
      binary,
      "admin",
      "create",
      "--email",
      "other@example.com",
      "--password",
      "other-password-12",
      "--org",
      "Other",
    ],
    { cwd: folder, env, stdout: "pipe", stderr: "pipe" },
  );
  expect({ code: created.exitCode, output: `${created.stdout}${created.stderr}` }).toMatchObject({ code: 0 });
  expect(created.stdout.toString()).toContain('in organization "Other" (new; VPN subnet 10.213.77.128/25)');
  expect(created.stdout.toString()).toContain(
    "the VPN server's key pair was replaced: export the server configuration again with `bulwark vpn server-config`",
  );
  // The running server reports the new key at the first organization's devices' next check-in.
  const checkedIn = await call(server, "POST", "/api/v1/agent/checkin", firstDevice.device_token, {});
  const newKey: string = checkedIn.vpn_config.server_public_key;
  expect(newKey).not.toBe(firstDevice.vpn_config.server_public_key);
  expect(checkedIn.vpn_config.address).toBe(firstDevice.vpn_config.address);
  const other = await call(server, "POST", "/api/v1/auth/login", undefined, {
    email: "other@example.com",
    password: "other-password-12",
  });
  const enrollment = await call(server, "POST", "/api/v1/enrollment-tokens", other.token, {});
  const theirs = await call(server, "POST", "/api/v1/devices/enroll", undefined, {
    enrollment_token: enrollment.token,
    device_name: "Other laptop",
    platform: "macos",
    agent_version: "1.0.0",
    hardware_id: `hw-other-${suffix}`,
  });
  expect(theirs.vpn_config.server_public_key).toBe(newKey);
  expect(theirs.vpn_config.allowed_ips).toEqual(["10.213.77.128/25", "10.213.77.1/32"]);
  const exported = await call(server, "GET", "/api/v1/vpn/server-config", other.token);
  expect(exported.includes_private_key).toBe(false);
  expect(exported.server_public_key).toBe(newKey);
  expect(exported.peers.map((peer: { device_id: string }) => peer.device_id)).toEqual([theirs.id]);

  const cli = Bun.spawnSync([binary, "vpn", "server-config"], {
    cwd: folder,
    env,
    stdout: "pipe",
    stderr: "pipe",
  });
  expect(cli.exitCode).toBe(0);
  const text = cli.stdout.toString();
  const privateKey = /^PrivateKey = (\S+)$/m.exec(text)?.[1] ?? "";
  expect(wgPubkey(privateKey)).toBe(exported.server_public_key);
  expect(text.match(/^\[Peer\]$/gm)).toHaveLength(2);
  expect(text).toContain(`PublicKey = ${theirs.vpn_config.public_key}`);
  // What wg itself reads: both organizations' devices are peers of the one server.
  writeFileSync(join(folder, "all.conf"), text, { mode: 0o600 });
  const peers = runTool(["wg-quick", "strip", join(folder, "all.conf")]).match(/^PublicKey = /gm);
  expect(peers).toHaveLength(2);
}, 60_000);
