/**
 * Whether the bulwark tunnel is up on a Mac, judged as wg-quick judges it (darwin.bash
 * `get_real_interface`, after `wg show interfaces`), in a prepared root with real Unix sockets: the name
 * file counts only with its utun's socket there, listening, and of the same time (within 2 s). The plan,
 * the enforcement and `vpn_connected` all read it so; and the unenroll's self-bootout outlives the agent.
 */
import { afterEach, expect, test } from "bun:test";
import {
  existsSync,
  linkSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  renameSync,
  rmSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ProgramResult, ProgramRunner } from "../../src/agent/facts/fact";
import { macosTunnelOwnership, tunnelUtun } from "../../src/agent/macos/enforce";
import { readMacosTunnel } from "../../src/agent/macos/facts";
import { startBootoutAfterExit } from "../../src/agent/macos/service";
import { readTunnelName } from "../../src/agent/macos/tunnel";
import { MachineTree } from "../../src/agent/root-path";

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

/** A prepared Mac's ROOT, with its /var/run/wireguard folder (both real folders here). */
function macRoot(): { root: string; run: string } {
  const root = mkdtempSync(join(tmpdir(), "bulwark-tun-"));
  cleanups.push(() => rmSync(root, { recursive: true, force: true }));
  const run = join(root, "var/run/wireguard");
  mkdirSync(run, { recursive: true });
  return { root, run };
}

/** What wireguard-go leaves while it runs: a socket listening at `run/utun.sock` (stopped after the test). */
function listen(run: string, utun: string): string {
  const path = join(run, `${utun}.sock`);
  const listener = Bun.listen({ unix: path, socket: { data() {} } });
  cleanups.push(() => listener.stop(true));
  return path;
}

/** A socket file nothing listens on any more (a wireguard-go that died: the file stays). */
function deadSocket(run: string, utun: string): string {
  const path = join(run, `${utun}.sock`);
  const listener = Bun.listen({ unix: path, socket: { data() {} } });
  // Stopping unlinks the path: a second link to the socket keeps it, as a killed process leaves it.
  linkSync(path, `${path}.kept`);
  listener.stop(true);
  renameSync(`${path}.kept`, path);
  return path;
}

/** wg-quick's name file naming `utun`, of time `seconds`. */
function nameFile(run: string, utun: string, seconds: number): void {
  const path = join(run, "bulwark.name");
  writeFileSync(path, `${utun}\n`);
  utimesSync(path, seconds, seconds);
}

const NOW = 1_765_099_980;

test("a name file with its utun's socket listening, of the same time: up", async () => {
  const { run } = macRoot();
  nameFile(run, "utun4", NOW);
  const socket = listen(run, "utun4");
  // wireguard-go makes the socket a moment after it writes the name file.
  utimesSync(socket, NOW + 1, NOW + 1);
  expect(await readTunnelName(run)).toEqual({ state: "up", utun: "utun4" });
  expect(await tunnelUtun(run)).toBe("utun4");
  expect(await macosTunnelOwnership({ ifindex: 4, boot_id: "utun4" }, run)).toBe("ours");
  expect(await macosTunnelOwnership(null, run)).toBe("other");
});

test("no name file, or one naming no utun: not up", async () => {
  const { run } = macRoot();
  expect(await readTunnelName(run)).toEqual({ state: "down", detail: "no /var/run/wireguard/bulwark.name" });
  writeFileSync(join(run, "bulwark.name"), "../../etc/passwd\n");
  expect(await readTunnelName(run)).toEqual({
    state: "down",
    detail: '/var/run/wireguard/bulwark.name names "../../etc/passwd", not a utun',
  });
  expect(await tunnelUtun(join(run, "missing"))).toBeNull();
});

test("a name file whose socket is gone (wireguard-go ended): not up, and the tunnel is absent", async () => {
  const { run } = macRoot();
  nameFile(run, "utun4", NOW);
  expect(await readTunnelName(run)).toEqual({
    state: "down",
    detail:
      "/var/run/wireguard/bulwark.name names utun4, but /var/run/wireguard/utun4.sock is gone (its wireguard-go has ended)",
  });
  expect(await macosTunnelOwnership({ ifindex: 4, boot_id: "utun4" }, run)).toBe("absent");
  // A file of that name that is not a socket does not count either.
  writeFileSync(join(run, "utun4.sock"), "");
  utimesSync(join(run, "utun4.sock"), NOW, NOW);
  expect((await readTunnelName(run)).state).toBe("down");
});

test("a socket far in time from the name file (another wireguard-go took the utun): not up", async () => {
  const { run } = macRoot();
  nameFile(run, "utun4", NOW);
  const socket = listen(run, "utun4");
  utimesSync(socket, NOW + 3600, NOW + 3600);
  expect(await readTunnelName(run)).toEqual({
    state: "down",
    detail:
      "/var/run/wireguard/bulwark.name names utun4, but /var/run/wireguard/utun4.sock is 3600 s newer than it: another wireguard-go's, the name file is left from an earlier run",
  });
  expect(await macosTunnelOwnership({ ifindex: 4, boot_id: "utun4" }, run)).toBe("absent");
  // darwin.bash's bounds, in whole seconds: 2 apart is stale, either way; 1 apart is not.
  utimesSync(socket, NOW - 2, NOW - 2);
  expect((await readTunnelName(run)).state).toBe("down");
  utimesSync(socket, NOW - 1, NOW - 1);
  expect((await readTunnelName(run)).state).toBe("up");
  utimesSync(socket, NOW + 2.5, NOW + 2.5);
  expect((await readTunnelName(run)).state).toBe("down");
});

test("a socket that refuses connections (wireguard-go died, its file stayed): not up", async () => {
  const { run } = macRoot();
  nameFile(run, "utun4", NOW);
  const socket = deadSocket(run, "utun4");
  utimesSync(socket, NOW, NOW);
  expect(await readTunnelName(run)).toEqual({
    state: "down",
    detail:
      "/var/run/wireguard/bulwark.name names utun4, but nothing answers on /var/run/wireguard/utun4.sock (its wireguard-go has died)",
  });
  // Only read: the socket file is left where it is (wg removes it, the agent does not).
  expect(existsSync(socket)).toBe(true);
});

/** A runner answering `wg show utun4 latest-handshakes` with a handshake 25 s before NOW. */
function wgAnswering(): ProgramRunner & { calls: string[] } {
  const calls: string[] = [];
  const run = async (argv: string[]): Promise<ProgramResult> => {
    calls.push(argv.join(" "));
    if (argv.join(" ") === "/opt/homebrew/bin/wg show utun4 latest-handshakes")
      return { code: 0, stdout: `aGVsbG8gd29ybGQgaGVsbG8gd29ybGQgaGVsbG8hIQ=\t${NOW - 25}\n`, stderr: "" };
    return { code: 127, stdout: "", stderr: "not installed" };
  };
  return Object.assign(run, { calls });
}

test("vpn_connected under ROOT: the same rule, so a stale name file is not connected and wg is not asked", async () => {
  const { root, run } = macRoot();
  nameFile(run, "utun4", NOW);
  const socket = listen(run, "utun4");
  utimesSync(socket, NOW, NOW);
  const tree = await MachineTree.open(root);
  const wg = wgAnswering();
  expect(await readMacosTunnel(tree, { isLive: true, runProgram: wg, nowSeconds: NOW })).toEqual({
    value: true,
    detail: "the bulwark tunnel (utun4) is up; its latest handshake was 25 s ago (at most 180 s counts)",
  });
  // Another wireguard-go's socket, whose handshakes would be another tunnel's.
  utimesSync(socket, NOW + 600, NOW + 600);
  wg.calls.length = 0;
  const stale = await readMacosTunnel(tree, { isLive: true, runProgram: wg, nowSeconds: NOW });
  expect(stale.value).toBe(false);
  expect(stale.detail).toContain("the bulwark tunnel is not up (/var/run/wireguard/bulwark.name names utun4");
  expect(wg.calls).toEqual([]);
});

test("vpn_connected from a capture (no file times there): the name file and whether its socket exists", async () => {
  const files: Record<string, string> = { "/var/run/wireguard/bulwark.name": "utun4\n" };
  const sockets = new Set<string>();
  const replay = {
    isLiveSystem: true,
    readText: async (path: string) => files[path] ?? null,
    exists: async (path: string) => path in files || sockets.has(path),
    list: async () => null,
    canonical: async (path: string) => path,
  };
  const wg = wgAnswering();
  const gone = await readMacosTunnel(replay, { isLive: true, runProgram: wg, nowSeconds: NOW });
  expect(gone).toEqual({
    value: false,
    detail:
      "the bulwark tunnel is not up (/var/run/wireguard/bulwark.name names utun4, but /var/run/wireguard/utun4.sock is gone (its wireguard-go has ended))",
  });
  sockets.add("/var/run/wireguard/utun4.sock");
  expect((await readMacosTunnel(replay, { isLive: true, runProgram: wg, nowSeconds: NOW })).value).toBe(true);
});

test("the unenroll's bootout waits for the agent to end, in a session of its own", async () => {
  const base = mkdtempSync(join(tmpdir(), "bulwark-bootout-"));
  cleanups.push(() => rmSync(base, { recursive: true, force: true }));
  // A stand-in for launchctl that records what it was asked.
  const launchctl = join(base, "launchctl");
  const said = join(base, "said");
  writeFileSync(launchctl, `#!/bin/sh\necho "$@" > ${said}\n`, { mode: 0o755 });
  const agent = Bun.spawn(["sleep", "1.5"]);
  const child = startBootoutAfterExit(agent.pid, launchctl);
  const pid = child.pid as number;
  if (existsSync(`/proc/${pid}/stat`)) {
    // Fields after the command: state, parent, process group, session. Its own group and session.
    const [, , group, session] = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    expect(Number(group)).toBe(pid);
    expect(Number(session)).toBe(pid);
  }
  await Bun.sleep(500);
  expect(existsSync(said)).toBe(false);
  await agent.exited;
  const deadline = Date.now() + 5000;
  while (!existsSync(said) && Date.now() < deadline) await Bun.sleep(100);
  expect(readFileSync(said, "utf8")).toBe("bootout system/com.bulwark.agent\n");
});
