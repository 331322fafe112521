/**
 * `bulwark vpn sync` against the built executable, with real tunnels: the VPN server's wireguard-go
 * interface in a network namespace of its own, brought up from `bulwark vpn server-config` as the
 * operator does once; a device in another namespace, joined to it by a veth pair, brought up from its
 * enrollment's wg_quick as vpn-isolation.test.ts does. The sync runs with an API key that has only the
 * vpn:read scope. It runs beside the Bulwark server, on this test's loopback: wireguard-go's control
 * socket (/var/run/wireguard/<name>.sock, which `wg` talks to) is a file, the same from every namespace,
 * so the sync reaches the interface there as it would on the VPN host. A device enrolled after the sync
 * started pings the server's tunnel address within 15 s with nothing done by hand on the server; a
 * retired one's peer is gone within 15 s; the interface's own key, port and address never change;
 * while the Bulwark server is stopped the sync backs off and the peers stay, and it picks up the next
 * enrollment once the server is back. Also: deploy/bulwark-vpn-sync.service passes `systemd-analyze
 * verify`, and `vpn install-service` writes it, the key and the executable on a prepared tree.
 * Needs root, /dev/net/tun, wireguard-go and wireguard-tools, as the other tunnel tests do.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import {
  buildBinary,
  callServer as call,
  expectOneLine,
  type RunningServer,
  runCommand,
  startServer,
} from "../helpers/binary";
import { freePort } from "../helpers/pg-cluster";
import { selfSignedCertificate } from "../helpers/pki";
import { runTool, strippedFile } from "../helpers/wireguard";

const suffix = crypto.randomUUID().slice(0, 6);
const folder = mkdtempSync(join(tmpdir(), "bulwark-vpn-sync-"));
const LISTEN_PORT = 40_000 + Math.floor(Math.random() * 20_000);
const SERVER_NS = `bw${suffix}-vsrv`;
const DEVICE_NS = `bw${suffix}-vdev`;
/** Names of their own: wireguard-go's control sockets are shared by all namespaces. */
const SERVER_IF = `bv${suffix}s`;
const DEVICE_IF = `bv${suffix}d`;
/** The VPN server's underlay address, on its namespace's loopback, reached through the veth pair. */
const ENDPOINT_ADDRESS = "198.18.0.1";
const SERVER_TUNNEL_ADDRESS = "10.215.0.1";
const ADMIN = { email: "vpn-sync@example.com", password: "vpn-sync-password-1" };
const USERSPACE = { WG_I_PREFER_BUGGY_USERSPACE_TO_POLISHED_KMOD: "1" };
/** The two bounds the sync promises: a new device reaches the server, a retired one is gone. */
const BOUND_MS = 15_000;

let binary: string;
let port: number;
let env: Record<string, string>;
const servers: RunningServer[] = [];
let sync: ReturnType<typeof Bun.spawn> | undefined;
/** The sync's log, line by line. */
const syncLog: string[] = [];

beforeAll(async () => {
  binary = await buildBinary();
  port = await freePort();
  env = {
    BULWARK_ADMIN_EMAIL: ADMIN.email,
    BULWARK_ADMIN_PASSWORD: ADMIN.password,
    // A fixed port: the server stopped and started again is found at the same URL.
    BULWARK_SERVER_PORT: String(port),
    BULWARK_LOG_FORMAT: "json",
    BULWARK_VPN_ENDPOINT: `${ENDPOINT_ADDRESS}:${LISTEN_PORT}`,
    BULWARK_VPN_ADDRESS_POOL: "10.215.0.0/24",
  };
}, 120_000);

afterAll(async () => {
  if (sync && sync.exitCode === null) {
    sync.kill("SIGTERM");
    await Promise.race([sync.exited, Bun.sleep(5_000)]);
  }
  // Deleting an interface ends its wireguard-go; deleting a namespace removes its veth pair.
  for (const [ns, iface] of [
    [SERVER_NS, SERVER_IF],
    [DEVICE_NS, DEVICE_IF],
  ] as const) {
    Bun.spawnSync(["ip", "-n", ns, "link", "del", iface], { stderr: "pipe" });
    Bun.spawnSync(["ip", "netns", "del", ns], { stderr: "pipe" });
  }
  for (const server of servers) await server.stop("SIGKILL");
  rmSync(folder, { recursive: true, force: true });
});

function inNs(ns: string, command: string[], extra: Record<string, string> = {}): string {
  return runTool(["ip", "netns", "exec", ns, ...command], extra);
}

/** One ping from the device's namespace through its tunnel: ping's exit status. */
function pingsOnce(target: string): boolean {
  const result = Bun.spawnSync(
    ["ip", "netns", "exec", DEVICE_NS, "ping", "-n", "-q", "-c", "1", "-W", "1", target],
    {
      stdout: "pipe",
      stderr: "pipe",
    },
  );
  return result.exitCode === 0;
}

/** The server interface's peers' public keys. */
function serverPeers(): string[] {
  return runTool(["wg", "show", SERVER_IF, "peers"]).trim().split("\n").filter(Boolean);
}

/** What the interface is, besides its peers: it must never change. */
function interfaceIdentity() {
  return {
    privateKey: runTool(["wg", "show", SERVER_IF, "private-key"]).trim(),
    publicKey: runTool(["wg", "show", SERVER_IF, "public-key"]).trim(),
    listenPort: runTool(["wg", "show", SERVER_IF, "listen-port"]).trim(),
    addresses: runTool(["ip", "-n", SERVER_NS, "-brief", "address", "show", "dev", SERVER_IF])
      .trim()
      .split(/\s+/)
      .slice(2),
  };
}

/** Waits, up to `ms`, for `condition`; returns how long it took, or null when it never held. */
async function within(ms: number, condition: () => boolean, pause = 200): Promise<number | null> {
  const start = Date.now();
  while (Date.now() - start <= ms) {
    if (condition()) return Date.now() - start;
    await Bun.sleep(pause);
  }
  return condition() ? Date.now() - start : null;
}

/** Collects a stream's lines into `into`. */
async function collectLines(stream: ReadableStream<Uint8Array>, into: string[]) {
  const decoder = new TextDecoder();
  let partial = "";
  for await (const chunk of stream) {
    partial += decoder.decode(chunk, { stream: true });
    const lines = partial.split("\n");
    partial = lines.pop() ?? "";
    into.push(...lines);
  }
  if (partial !== "") into.push(partial);
}

async function enroll(server: RunningServer, token: string, name: string) {
  const enrollment = await call(server, "POST", "/api/v1/enrollment-tokens", token, {});
  return call(server, "POST", "/api/v1/devices/enroll", undefined, {
    enrollment_token: enrollment.token,
    device_name: name,
    platform: "linux",
    agent_version: "1.0.0",
    hardware_id: `hw-${name}-${suffix}`,
  });
}

describe("bulwark vpn sync with real tunnels", () => {
  test("a device enrolled after the sync started reaches the server within 15 s, a retired one's peer is gone within 15 s, and a server that is away leaves the peers as they are", async () => {
    const server = await startServer(binary, folder, env);
    servers.push(server);
    const admin = await call(server, "POST", "/api/v1/auth/login", undefined, ADMIN);
    const created = await call(server, "POST", "/api/v1/auth/api-keys", admin.token, {
      name: "vpn host",
      // vpn:report too: the handshakes it sees are what makes a phone without an agent online.
      scopes: ["vpn:read", "vpn:report"],
    });
    const keyFile = join(folder, "vpn-sync.key");
    writeFileSync(keyFile, `# the VPN host's key\n${created.key}\n`, { mode: 0o600 });
    // A device that is a peer before the sync starts, and stays one throughout.
    const kept = await enroll(server, admin.token, "kept");

    // The VPN server, set up once from the operator's export, as docs/vpn.md says.
    const exported = runCommand(binary, ["vpn", "server-config"], folder, env);
    expect(exported.code, exported.stderr).toBe(0);
    const serverConf = exported.stdout;
    runTool(["ip", "netns", "add", SERVER_NS]);
    runTool(["ip", "netns", "add", DEVICE_NS]);
    for (const ns of [SERVER_NS, DEVICE_NS]) runTool(["ip", "-n", ns, "link", "set", "lo", "up"]);
    runTool(["ip", "-n", SERVER_NS, "address", "add", `${ENDPOINT_ADDRESS}/32`, "dev", "lo"]);
    const link = `v${suffix}s`;
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
      DEVICE_NS,
    ]);
    runTool(["ip", "-n", SERVER_NS, "address", "add", "198.18.1.1/24", "dev", link]);
    runTool(["ip", "-n", SERVER_NS, "link", "set", link, "up"]);
    runTool(["ip", "-n", DEVICE_NS, "address", "add", "198.18.1.2/24", "dev", "under"]);
    runTool(["ip", "-n", DEVICE_NS, "link", "set", "under", "up"]);
    runTool(["ip", "-n", DEVICE_NS, "route", "add", `${ENDPOINT_ADDRESS}/32`, "via", "198.18.1.1"]);
    inNs(SERVER_NS, ["wireguard-go", SERVER_IF], USERSPACE);
    inNs(SERVER_NS, ["wg", "setconf", SERVER_IF, strippedFile(folder, "server", serverConf)]);
    const serverAddress = /^Address = (.*)$/m.exec(serverConf)?.[1] ?? "";
    expect(serverAddress).toBe(`${SERVER_TUNNEL_ADDRESS}/24`);
    runTool(["ip", "-n", SERVER_NS, "address", "add", serverAddress, "dev", SERVER_IF]);
    runTool(["ip", "-n", SERVER_NS, "link", "set", SERVER_IF, "up"]);
    const identity = interfaceIdentity();
    expect(identity.privateKey).toBe(/^PrivateKey = (.*)$/m.exec(serverConf)?.[1] ?? "");
    expect(identity.listenPort).toBe(String(LISTEN_PORT));
    expect(serverPeers()).toEqual([kept.vpn_config.public_key]);

    // The sync, at its default pace (every 3 s), with the key read from its file (never the command line).
    sync = Bun.spawn(
      [binary, "vpn", "sync", "--server", server.url, "--api-key-file", keyFile, "--interface", SERVER_IF],
      { env: { PATH: process.env.PATH ?? "" }, stdout: "pipe", stderr: "pipe" },
    );
    void collectLines(sync.stderr as ReadableStream<Uint8Array>, syncLog);
    void collectLines(sync.stdout as ReadableStream<Uint8Array>, syncLog);
    const log = () => syncLog.join("\n");
    /** The sync's log holds `text`: its lines cross a pipe, so they are waited for (within the bound). */
    const logSays = async (text: string | RegExp) =>
      expect(
        await within(BOUND_MS, () => (typeof text === "string" ? log().includes(text) : text.test(log()))),
        `the log does not say ${text}:\n${log()}`,
      ).not.toBeNull();
    expect(
      await within(BOUND_MS, () => log().includes(`${SERVER_IF}: in sync, 1 peer`)),
      log(),
    ).not.toBeNull();
    expect(syncLog.join("\n")).not.toContain(created.key);

    // A device enrolled now: its own tunnel, as its agent brings it up; nothing is done on the server.
    const laptop = await enroll(server, admin.token, "laptop");
    const enrolledAt = Date.now();
    const wgQuick: string = laptop.vpn_config.wg_quick;
    inNs(DEVICE_NS, ["wireguard-go", DEVICE_IF], USERSPACE);
    inNs(DEVICE_NS, ["wg", "setconf", DEVICE_IF, strippedFile(folder, "laptop", wgQuick)]);
    runTool(["ip", "-n", DEVICE_NS, "address", "add", laptop.vpn_config.address, "dev", DEVICE_IF]);
    runTool(["ip", "-n", DEVICE_NS, "link", "set", DEVICE_IF, "up"]);
    for (const allowed of laptop.vpn_config.allowed_ips as string[])
      runTool(["ip", "-n", DEVICE_NS, "route", "add", allowed, "dev", DEVICE_IF]);
    const reached = await within(
      BOUND_MS - (Date.now() - enrolledAt),
      () => pingsOnce(SERVER_TUNNEL_ADDRESS),
      0,
    );
    const reachedAfter = Date.now() - enrolledAt;
    expect(
      reached,
      `no ping within 15 s of enrollment:\n${log()}\n${runTool(["wg", "show", "all"])}`,
    ).not.toBeNull();
    console.log(`the new device pinged the server ${reachedAfter} ms after its enrollment`);
    expect(serverPeers().sort()).toEqual([kept.vpn_config.public_key, laptop.vpn_config.public_key].sort());
    await logSays(
      `${SERVER_IF}: added 1 peer (laptop (${laptop.id}) ${laptop.vpn_config.address}); 2 peers now`,
    );
    // The interface is still the operator's: the same key, port and address.
    expect(interfaceIdentity()).toEqual(identity);

    // Retired: its peer goes, and its tunnel no longer answers.
    const retired = await call(server, "POST", `/api/v1/devices/${laptop.id}/retire`, admin.token, {
      reason: "stolen",
    });
    const retiredAt = Date.now();
    expect(retired.id).toBe(laptop.id);
    const gone = await within(BOUND_MS, () => !serverPeers().includes(laptop.vpn_config.public_key));
    console.log(`the retired device's peer was gone ${Date.now() - retiredAt} ms after the retirement`);
    expect(gone, `the retired device is still a peer after 15 s:\n${log()}`).not.toBeNull();
    expect(serverPeers()).toEqual([kept.vpn_config.public_key]);
    await logSays(`${SERVER_IF}: removed 1 peer (laptop (${laptop.id})); 1 peer now`);
    expect(pingsOnce(SERVER_TUNNEL_ADDRESS)).toBe(false);
    expect(interfaceIdentity()).toEqual(identity);

    // A phone added with its QR code only: no agent, so the server knows it only by the handshake this
    // host sees. It is pending until its tunnel comes up, then online with vpn_connected.
    const added = await call(server, "POST", "/api/v1/devices/phones", admin.token, {
      device_name: "pixel",
      platform: "android",
    });
    expect(added.device.status).toBe("pending");
    const phoneConfig = await call(
      server,
      "GET",
      `/api/v1/devices/${added.device.id}/vpn-config`,
      admin.token,
    );
    inNs(DEVICE_NS, ["wg", "setconf", DEVICE_IF, strippedFile(folder, "pixel", phoneConfig.wg_quick)]);
    runTool(["ip", "-n", DEVICE_NS, "address", "flush", "dev", DEVICE_IF]);
    runTool(["ip", "-n", DEVICE_NS, "address", "add", `${added.device.vpn_ip}/32`, "dev", DEVICE_IF]);
    for (const allowed of laptop.vpn_config.allowed_ips as string[])
      Bun.spawnSync(["ip", "-n", DEVICE_NS, "route", "replace", allowed, "dev", DEVICE_IF]);
    expect(await within(BOUND_MS, () => pingsOnce(SERVER_TUNNEL_ADDRESS), 0), log()).not.toBeNull();
    let phone: { status: string; facts: { vpn_connected?: boolean } | null } = added.device;
    const deadline = Date.now() + BOUND_MS;
    while (phone.status !== "online" && Date.now() < deadline) {
      await Bun.sleep(250);
      phone = await call(server, "GET", `/api/v1/devices/${added.device.id}`, admin.token);
    }
    expect(phone.status, `the phone's handshake did not reach the server:\n${log()}`).toBe("online");
    expect(phone.facts).toEqual({ vpn_connected: true });
    await call(server, "POST", `/api/v1/devices/${added.device.id}/retire`, admin.token, { reason: "test" });
    expect(await within(BOUND_MS, () => serverPeers().length === 1)).not.toBeNull();

    // A poll that finds nothing new is a 304, without a body (the next one, at the latest).
    const polls = () =>
      server
        .output()
        .split("\n")
        .filter((line) => line.includes('"route":"/api/v1/vpn/peers"'));
    expect(
      await within(BOUND_MS, () => polls().some((line) => line.includes('"status":304'))),
    ).not.toBeNull();
    expect(polls().every((line) => /"status":(200|304)/.test(line))).toBe(true);

    // The server goes away: the sync backs off, saying so, and the peers stay.
    await server.stop();
    const failuresBefore = syncLog.length;
    const failureLines = () =>
      syncLog.slice(failuresBefore).filter((line) => line.includes("nothing listens at 127.0.0.1"));
    expect(await within(30_000, () => failureLines().length >= 4), log()).not.toBeNull();
    const waits = failureLines().map((line) => Number(/trying again in ([\d.]+) s/.exec(line)?.[1]));
    // 1 s doubling, each drawn from the last three quarters of its step: every wait longer than the last.
    for (const [index, wait] of waits.entries())
      if (index > 0) expect(wait).toBeGreaterThan(waits[index - 1] ?? 0);
    for (const line of failureLines()) expect(line).toContain(`${SERVER_IF} keeps its 1 peer`);
    expect(serverPeers()).toEqual([kept.vpn_config.public_key]);
    expect(interfaceIdentity()).toEqual(identity);

    // Back at the same URL: the sync says so and picks up what changed meanwhile.
    const again = await startServer(binary, folder, env);
    servers.push(again);
    expect(again.url).toBe(server.url);
    const session = await call(again, "POST", "/api/v1/auth/login", undefined, ADMIN);
    const later = await enroll(again, session.token, "later");
    expect(
      await within(70_000, () => serverPeers().includes(later.vpn_config.public_key)),
      `the sync did not come back:\n${log()}`,
    ).not.toBeNull();
    await logSays(/answers again after \d+ failed tries/);
    expect(serverPeers().sort()).toEqual([kept.vpn_config.public_key, later.vpn_config.public_key].sort());
    expect(interfaceIdentity()).toEqual(identity);

    // SIGTERM ends it, with exit 0.
    sync.kill("SIGTERM");
    expect(await sync.exited).toBe(0);
  }, 180_000);

  test("--once: a key without vpn:read, or no server at all, is one line and exit 1; the key is never a flag", async () => {
    const server = servers.at(-1);
    if (!server) throw new Error("the first test starts the server");
    const admin = await call(server, "POST", "/api/v1/auth/login", undefined, ADMIN);
    const created = await call(server, "POST", "/api/v1/auth/api-keys", admin.token, {
      name: "devices only",
      scopes: ["devices:read"],
    });
    const keyFile = join(folder, "devices.key");
    writeFileSync(keyFile, `${created.key}\n`, { mode: 0o600 });
    const flags = ["--api-key-file", keyFile, "--interface", SERVER_IF, "--once"];
    const refused = runCommand(binary, ["vpn", "sync", "--server", server.url, ...flags], folder);
    expect(refused.code).toBe(1);
    expectOneLine(
      refused.stderr,
      "refused: scope_missing (this action needs the scope vpn:read): the API key needs the vpn:read scope",
    );
    const away = runCommand(
      binary,
      ["vpn", "sync", "--server", `http://127.0.0.1:${await freePort()}`, ...flags],
      folder,
    );
    expect(away.code).toBe(1);
    expectOneLine(away.stderr, "nothing listens at 127.0.0.1:");
    const onCommandLine = runCommand(
      binary,
      ["vpn", "sync", "--server", server.url, "--api-key", created.key],
      folder,
    );
    expect(onCommandLine.code).toBe(2);
    expectOneLine(onCommandLine.stderr, "unknown flag --api-key");
    expect(onCommandLine.stderr).not.toContain(created.key);
  }, 60_000);
});

describe("deploy/bulwark-vpn-sync.service and vpn install-service", () => {
  const shipped = readFileSync(join(import.meta.dir, "../../deploy/bulwark-vpn-sync.service"), "utf8");

  function verify(unitText: string, name: string) {
    const dir = join(folder, "systemd", name);
    mkdirSync(dir, { recursive: true });
    const path = join(dir, "bulwark-vpn-sync.service");
    // verify needs the program ExecStart names to exist: the executable under test stands in for it.
    writeFileSync(
      path,
      unitText.replace("ExecStart=/usr/local/bin/bulwark ", `ExecStart=${resolve(binary)} `),
    );
    const result = Bun.spawnSync(["systemd-analyze", "verify", path], { stdout: "pipe", stderr: "pipe" });
    return { exitCode: result.exitCode, output: `${result.stdout}${result.stderr}`.trim() };
  }

  test("systemd-analyze verify: no error and no warning; it restarts always, reads the key as a credential and may only manage the network", () => {
    const result = verify(shipped, "shipped");
    expect(result.output).toBe("");
    expect(result.exitCode).toBe(0);
    const lines = shipped.split("\n");
    for (const directive of [
      "Restart=always",
      "StartLimitIntervalSec=0",
      "LoadCredential=api-key:/etc/bulwark/vpn-sync.key",
      "CapabilityBoundingSet=CAP_NET_ADMIN",
      "NoNewPrivileges=yes",
      "ProtectSystem=strict",
      "UMask=0077",
    ])
      expect(lines).toContain(directive);
    expect(lines.filter((line) => line.startsWith("ExecStart="))).toEqual([
      "ExecStart=/usr/local/bin/bulwark vpn sync --server https://bulwark.example.com --api-key-file %d/api-key --interface wg0",
    ]);
  });

  test("on a prepared tree: the executable, the key (0600) and the CA copied, the unit written for the server and interface given, and verified", () => {
    const root = mkdtempSync(join(tmpdir(), "bulwark-vpn-root-"));
    try {
      const keyFile = join(folder, "install.key");
      writeFileSync(keyFile, "bwk_first\n\n# the second organization\nbwk_second\n", { mode: 0o600 });
      const caFile = join(folder, "ca.pem");
      writeFileSync(caFile, selfSignedCertificate("/CN=Bulwark test CA").certificate);
      const installed = runCommand(
        binary,
        [
          "vpn",
          "install-service",
          "--server",
          "https://bulwark.example.org/base%20path/",
          "--api-key-file",
          keyFile,
          "--interface",
          "wg7",
          "--interval",
          "10",
          "--ca-file",
          caFile,
          "--root",
          root,
        ],
        folder,
      );
      expect(installed.code, installed.stderr).toBe(0);
      expect(installed.stderr).toContain(
        `Installed ${join(root, "usr/local/bin/bulwark")} (0755), a copy of ${binary}`,
      );
      expect(installed.stderr).toContain(
        "ROOT is not /: run systemctl daemon-reload && systemctl enable --now bulwark-vpn-sync there",
      );
      expect(readFileSync(join(root, "usr/local/bin/bulwark")).equals(readFileSync(binary))).toBe(true);
      expect(statSync(join(root, "usr/local/bin/bulwark")).mode & 0o777).toBe(0o755);
      expect(readFileSync(join(root, "etc/bulwark/vpn-sync.key"), "utf8")).toBe("bwk_first\nbwk_second\n");
      expect(statSync(join(root, "etc/bulwark/vpn-sync.key")).mode & 0o777).toBe(0o600);
      expect(readFileSync(join(root, "etc/bulwark/vpn-sync-ca.pem"), "utf8")).toContain(
        "-----BEGIN CERTIFICATE-----",
      );
      const unit = readFileSync(join(root, "etc/systemd/system/bulwark-vpn-sync.service"), "utf8");
      expect(statSync(join(root, "etc/systemd/system/bulwark-vpn-sync.service")).mode & 0o777).toBe(0o644);
      // The shipped unit with two lines changed: what it starts, and the wg-quick unit it follows.
      const execStart =
        "ExecStart=/usr/local/bin/bulwark vpn sync --server https://bulwark.example.org/base%%20path --api-key-file %d/api-key --interface wg7 --interval 10 --ca-file /etc/bulwark/vpn-sync-ca.pem";
      expect(unit).toBe(
        shipped
          .replace(/^ExecStart=.*$/m, execStart)
          .replace(
            "After=network-online.target wg-quick@wg0.service",
            "After=network-online.target wg-quick@wg7.service",
          ),
      );
      const result = verify(unit, "installed");
      expect(result.output).toBe("");
      expect(result.exitCode).toBe(0);
      // Again (an upgrade with the same file): the copy is already there.
      const again = runCommand(
        binary,
        [
          "vpn",
          "install-service",
          "--server",
          "https://bulwark.example.org",
          "--api-key-file",
          keyFile,
          "--root",
          root,
        ],
        folder,
      );
      expect(again.code, again.stderr).toBe(0);
      expect(again.stderr).toContain(`${join(root, "usr/local/bin/bulwark")} is already this executable`);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  }, 60_000);

  test("on this machine without systemd: one line, exit 2, nothing written", () => {
    const keyFile = join(folder, "nosystemd.key");
    writeFileSync(keyFile, "bwk_only\n", { mode: 0o600 });
    // A mount namespace whose /run, /etc and /usr/local are empty: no systemd, and nothing real touched.
    const listing = join(mkdtempSync(join(tmpdir(), "bulwark-listing-")), "left");
    const script = [
      "set -e",
      "mount -t tmpfs tmpfs /run",
      "mount -t tmpfs tmpfs /etc/systemd/system",
      "mount -t tmpfs tmpfs /usr/local",
      "set +e",
      '"$@"; code=$?',
      'find /etc/systemd/system /usr/local -mindepth 1 > "$0"',
      'exit "$code"',
    ].join("\n");
    const refused = runCommand(
      "unshare",
      [
        "--mount",
        "--propagation",
        "private",
        "sh",
        "-c",
        script,
        listing,
        binary,
        "vpn",
        "install-service",
        "--server",
        "https://bulwark.example.org",
        "--api-key-file",
        keyFile,
      ],
      folder,
    );
    expect(refused.code).toBe(2);
    expectOneLine(
      refused.stderr,
      "systemd is not running here (no /run/systemd/system): nothing was installed",
    );
    expect(readFileSync(listing, "utf8")).toBe("");
  });
});
