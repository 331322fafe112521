/**
 * `bulwark agent enroll`, run from the built executable against a real `bulwark serve`, on prepared
 * machines: the keys stay on the machine (the server holds the public key `wg pubkey` derives from the
 * kept private key, and a certificate openssl verifies against the organization's CA), the state folder
 * is 0700 with 0600 files, and every failure has its exit code and writes nothing.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readdirSync, readFileSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildMachine, OS_RELEASES, ROOT_DEVICES, removeMachines } from "../helpers/agent-machine";
import { buildBinary, callServer, type RunningServer, runCommand, startServer } from "../helpers/binary";
import { certificateFields, opensslVerify } from "../helpers/pki";
import { wgPubkey } from "../helpers/wireguard";

const ADMIN = { email: "agent-admin@example.com", password: "correct-horse-battery" };

let binary: string;
let server: RunningServer;
let adminToken: string;

beforeAll(async () => {
  binary = await buildBinary();
  server = await startServer(binary, mkdtempSync(join(tmpdir(), "bulwark-agent-server-")), {
    BULWARK_ADMIN_EMAIL: ADMIN.email,
    BULWARK_ADMIN_PASSWORD: ADMIN.password,
    BULWARK_AUTH_PASSWORD_HASH_MEMORY_KIB: "64",
    BULWARK_AUTH_PASSWORD_HASH_ITERATIONS: "1",
    BULWARK_VPN_ENDPOINT: "vpn.bulwark-test.net:51820",
  });
  adminToken = (await callServer<{ token: string }>(server, "POST", "/api/v1/auth/login", undefined, ADMIN))
    .token;
}, 120_000);

afterAll(async () => {
  await server?.stop();
  removeMachines();
});

/** A laptop: a host name, a machine id, Debian 12 on LUKS. */
function laptop(name = "lab-laptop-7", machineId = crypto.randomUUID().replaceAll("-", "")) {
  return buildMachine(OS_RELEASES.debian, ...ROOT_DEVICES.luks, {
    files: { "etc/hostname": `${name}\n`, "etc/machine-id": `${machineId}\n` },
  });
}

async function enrollmentToken(body: Record<string, unknown> = {}): Promise<string> {
  return (await callServer<{ token: string }>(server, "POST", "/api/v1/enrollment-tokens", adminToken, body))
    .token;
}

function enroll(root: string, stateDir: string, ...args: string[]) {
  return runCommand(binary, ["agent", "enroll", "--root", root, "--state-dir", stateDir, ...args], tmpdir());
}

const stateFolder = () => join(mkdtempSync(join(tmpdir(), "bulwark-agent-state-")), "state");

describe("bulwark agent enroll", () => {
  test("enrolls with keys made on the machine: the server has the public key and a certificate, the folder is 0700 and its files 0600", async () => {
    const root = laptop();
    const state = stateFolder();
    const result = enroll(root, state, "--server", server.url, "--token", await enrollmentToken());
    expect({ code: result.code, stderr: result.stderr }).toMatchObject({ code: 0 });
    const deviceId = result.stdout.trim();
    expect(deviceId).toMatch(/^[0-9a-f-]{36}$/);

    const device = await callServer(server, "GET", `/api/v1/devices/${deviceId}`, adminToken);
    expect(device).toMatchObject({
      device_name: "lab-laptop-7",
      platform: "linux",
      os_version: "debian 12",
      hardware_id: readFileSync(join(root, "etc/machine-id"), "utf8").trim(),
      status: "online",
    });
    const kept = () => JSON.parse(readFileSync(join(state, "state.json"), "utf8"));
    // The private key never left: the server's public key is what wg derives from the kept one.
    const privateKey = readFileSync(join(state, "wg.key"), "utf8").trim();
    expect(device.vpn_public_key).toBe(wgPubkey(privateKey));
    // The certificate is the organization CA's, for this device, on a key only this machine has.
    const certificate = readFileSync(join(state, "device.crt"), "utf8");
    const ca = await (
      await fetch(`${server.url}/api/v1/agent/ca.pem`, {
        headers: { authorization: `Bearer ${kept().device_token}` },
      })
    ).text();
    expect(opensslVerify(ca, certificate).ok).toBe(true);
    expect(certificateFields(certificate).subject).toContain(deviceId);
    expect(device.certificate.serial.toUpperCase()).toBe(certificateFields(certificate).serial.toUpperCase());

    expect(statSync(state).mode & 0o777).toBe(0o700);
    for (const file of readdirSync(state))
      expect({ file, mode: statSync(join(state, file)).mode & 0o777 }).toEqual({ file, mode: 0o600 });
    expect(kept()).toMatchObject({ device_id: deviceId, state: "enrolled", server: server.url });
    expect(kept().tunnel.endpoint).toBe("vpn.bulwark-test.net:51820");

    // Enrolling again over an enrolled state folder is refused (exit 2) unless --force.
    const again = enroll(root, state, "--server", server.url, "--token", await enrollmentToken());
    expect(again.code).toBe(2);
    expect(again.stderr).toContain(`already holds the enrolled device ${deviceId}`);
    // --force alone would be refused (the hardware id is taken): the old device must be retired first.
    expect(again.stderr).toContain(`--force (an administrator must first retire the old device`);
    expect(again.stderr).toContain(`POST /api/v1/devices/${deviceId}/retire`);
  });

  test("--no-certificate, --name and --hardware-id: the token alone, under the given name and id", async () => {
    const state = stateFolder();
    const result = enroll(
      laptop(),
      state,
      "--server",
      server.url,
      "--token",
      await enrollmentToken(),
      "--no-certificate",
      "--name",
      "Kiosk 3",
      "--hardware-id",
      "KIOSK-0003",
    );
    expect(result.code).toBe(0);
    const device = await callServer(server, "GET", `/api/v1/devices/${result.stdout.trim()}`, adminToken);
    expect(device).toMatchObject({ device_name: "Kiosk 3", hardware_id: "KIOSK-0003", certificate: null });
    expect(existsSync(join(state, "device.crt"))).toBe(false);
  });

  test("each failure has its exit code and its reason, and writes nothing", async () => {
    // Refused by the server (3): a used-up token, with the server's reason.
    const token = await enrollmentToken();
    expect(enroll(laptop(), stateFolder(), "--server", server.url, "--token", token).code).toBe(0);
    const usedUp = stateFolder();
    const refused = enroll(laptop(), usedUp, "--server", server.url, "--token", token);
    expect(refused.code).toBe(3);
    expect(refused.stderr).toContain("enrollment_token_used_up");
    expect(refused.stderr).toContain("nothing was written");
    expect(existsSync(usedUp)).toBe(false);

    // The same machine twice (3): its hardware id is enrolled already.
    const machine = laptop("twin", "feedfacefeedfacefeedfacefeedface");
    expect(
      enroll(machine, stateFolder(), "--server", server.url, "--token", await enrollmentToken()).code,
    ).toBe(0);
    const twin = enroll(machine, stateFolder(), "--server", server.url, "--token", await enrollmentToken());
    expect(twin.code).toBe(3);
    expect(twin.stderr).toContain("hardware_id_enrolled");
    expect(twin.stderr).toContain("must first retire it");

    // Unreachable (4): nothing listens there.
    const nowhere = stateFolder();
    const unreachable = enroll(laptop(), nowhere, "--server", "http://127.0.0.1:9", "--token", "bwe_x");
    expect(unreachable.code).toBe(4);
    expect(existsSync(nowhere)).toBe(false);

    // Usage (2): no --token; no host name and no --name; no machine id and no --hardware-id.
    expect(enroll(laptop(), stateFolder(), "--server", server.url).code).toBe(2);
    const bare = buildMachine(OS_RELEASES.debian);
    const nameless = enroll(bare, stateFolder(), "--server", server.url, "--token", "bwe_x");
    expect(nameless.code).toBe(2);
    expect(nameless.stderr).toContain("--name");
    const idless = enroll(bare, stateFolder(), "--server", server.url, "--token", "bwe_x", "--name", "n");
    expect(idless.code).toBe(2);
    expect(idless.stderr).toContain("--hardware-id");
  });

  test("a plain http server on another machine is refused before anything is sent, unless --insecure-http", async () => {
    // 192.0.2.1 (TEST-NET-1) is never contacted: the refusal comes before any request.
    const folder = stateFolder();
    const refused = enroll(laptop(), folder, "--server", "http://192.0.2.1:9", "--token", "bwe_x");
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(
      "--server http://192.0.2.1:9 is plain http: the device token, the policies",
    );
    expect(refused.stderr).toContain("or accept this with --insecure-http");
    expect(existsSync(folder)).toBe(false);
    // A CA has nothing to verify over http; two CAs are one too many.
    const pinned = enroll(
      laptop(),
      stateFolder(),
      "--server",
      server.url,
      "--token",
      "bwe_x",
      "--ca-sha256",
      "ab",
    );
    expect(pinned.code).toBe(2);
    expect(pinned.stderr).toContain("is plain http: a CA has nothing to verify");
    const both = enroll(
      laptop(),
      stateFolder(),
      "--server",
      "https://127.0.0.1:9",
      "--token",
      "bwe_x",
      "--ca-file",
      "x.pem",
      "--ca-sha256",
      "ab",
    );
    expect(both.code).toBe(2);
    expect(both.stderr).toContain("--ca-file and --ca-sha256 both name the server's CA");
    // This machine (loopback) crosses no network: plain http is taken, with no warning.
    const local = enroll(laptop(), stateFolder(), "--server", server.url, "--token", await enrollmentToken());
    expect(local.code, local.stderr).toBe(0);
    expect(local.stderr).not.toContain("Warning");
  });
});
