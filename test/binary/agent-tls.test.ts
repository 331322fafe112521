/**
 * The agent's device certificate, from the built executable against a real `bulwark serve` that
 * terminates TLS (its certificate openssl's): the agent authenticates with the certificate in the TLS
 * handshake, falls back to its token when the server refuses the certificate, and renews it (a key made
 * on the machine) when it is revoked or 30 days before it expires by the server's clock (server and
 * agent run 340 days on under libfaketime), once a day at most; an agent whose own clock alone is far
 * off renews nothing and says so.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildMachine, OS_RELEASES, ROOT_DEVICES, removeMachines } from "../helpers/agent-machine";
import { buildBinary, callServer, expectOneLine, type RunningServer, startServer } from "../helpers/binary";
import { certificateFields, opensslVerify, selfSignedCertificate } from "../helpers/pki";

const ADMIN = { email: "agent-tls@example.com", password: "agent-tls-password-1" };
const folder = mkdtempSync(join(tmpdir(), "bulwark-agent-tls-"));
// Valid long enough for an agent run a year on to still trust it.
const serverTls = selfSignedCertificate("/CN=localhost", "DNS:localhost,IP:127.0.0.1", 800);
const CA_FILE = join(folder, "server-ca.pem");
writeFileSync(CA_FILE, serverTls.certificate);
writeFileSync(join(folder, "server.crt"), serverTls.certificate);
writeFileSync(join(folder, "server.key"), serverTls.key);

let binary: string;
let server: RunningServer;
let adminToken: string;

beforeAll(async () => {
  binary = await buildBinary();
  server = await startServer(
    binary,
    folder,
    {
      BULWARK_SERVER_TLS_CERT: join(folder, "server.crt"),
      BULWARK_SERVER_TLS_KEY: join(folder, "server.key"),
      BULWARK_ADMIN_EMAIL: ADMIN.email,
      BULWARK_ADMIN_PASSWORD: ADMIN.password,
      BULWARK_AUTH_PASSWORD_HASH_MEMORY_KIB: "64",
      BULWARK_AUTH_PASSWORD_HASH_ITERATIONS: "1",
    },
    { ca: serverTls.certificate },
  );
  adminToken = (await callServer<{ token: string }>(server, "POST", "/api/v1/auth/login", undefined, ADMIN))
    .token;
}, 120_000);

afterAll(async () => {
  await server?.stop();
  removeMachines();
  rmSync(folder, { recursive: true, force: true });
});

/**
 * Runs an agent command (under `faketime OFFSET` when given) on this machine's ROOT and state, from the
 * test's folder (where the CA file is) unless `cwd` says otherwise.
 */
function agent(machine: { root: string; stateDir: string }, args: string[], faketime?: string, cwd = folder) {
  const command = [binary, "agent", ...args, "--root", machine.root, "--state-dir", machine.stateDir];
  const run = Bun.spawnSync(faketime ? ["faketime", faketime, ...command] : command, {
    cwd,
    env: { PATH: process.env.PATH ?? "", HOME: folder },
  });
  return { code: run.exitCode, stdout: run.stdout.toString(), stderr: run.stderr.toString() };
}

/** A machine not enrolled yet (a folder for its state that does not exist yet), and a token for it. */
async function freshMachine(name = "tls-laptop") {
  const root = buildMachine(OS_RELEASES.debian, ...ROOT_DEVICES.luks, {
    files: {
      "etc/hostname": `${name}\n`,
      "etc/machine-id": `${crypto.randomUUID().replaceAll("-", "")}\n`,
    },
  });
  const stateDir = join(mkdtempSync(join(tmpdir(), "bulwark-agent-tls-state-")), "state");
  const { token } = await callServer(server, "POST", "/api/v1/enrollment-tokens", adminToken, {});
  return { machine: { root, stateDir, deviceId: "" }, token: token as string };
}

async function enrolledMachine(caFile = CA_FILE) {
  const { machine, token } = await freshMachine();
  const enrolled = agent(machine, ["enroll", "--server", server.url, "--token", token, "--ca-file", caFile]);
  expect(enrolled.code, enrolled.stderr).toBe(0);
  machine.deviceId = enrolled.stdout.trim();
  return machine;
}

function status(machine: { root: string; stateDir: string }) {
  const run = agent(machine, ["status", "--json"]);
  expect(run.code, run.stderr).toBe(0);
  return JSON.parse(run.stdout);
}

/** Replaces the device token in the state folder with one the server never issued. */
function spoilToken(stateDir: string): void {
  const path = join(stateDir, "state.json");
  const state = JSON.parse(readFileSync(path, "utf8"));
  writeFileSync(path, JSON.stringify({ ...state, device_token: `bwd_${"0".repeat(43)}` }), { mode: 0o600 });
}

const device = (deviceId: string) => callServer(server, "GET", `/api/v1/devices/${deviceId}`, adminToken);

test("over https the agent checks in with its device certificate: a token the server refuses does not matter", async () => {
  const machine = await enrolledMachine();
  const first = agent(machine, ["run", "--once", "--no-tunnel"]);
  expect(first.code, first.stderr).toBe(0);
  expect(status(machine).credential).toBe("device_certificate");

  spoilToken(machine.stateDir);
  const before = (await device(machine.deviceId)).last_seen;
  await Bun.sleep(1100);
  const second = agent(machine, ["run", "--once", "--no-tunnel"]);
  expect(second.code, second.stderr).toBe(0);
  expect(Date.parse((await device(machine.deviceId)).last_seen)).toBeGreaterThan(Date.parse(before));
  const text = agent(machine, ["status"]).stdout;
  expect(text).toContain("Authenticates with: its device certificate (TLS)");
}, 60_000);

test("a revoked certificate (suspended, then unsuspended) is refused; the agent checks in with its token and renews it", async () => {
  const machine = await enrolledMachine();
  expect(agent(machine, ["run", "--once", "--no-tunnel"]).code).toBe(0);
  const first = (await device(machine.deviceId)).certificate;
  await callServer(server, "PUT", `/api/v1/devices/${machine.deviceId}/status`, adminToken, {
    status: "suspended",
    reason: "lost for a day",
  });
  await callServer(server, "PUT", `/api/v1/devices/${machine.deviceId}/status`, adminToken, {
    status: "online",
  });
  expect((await device(machine.deviceId)).certificate.revoked).toBe(true);

  const run = agent(machine, ["run", "--once", "--no-tunnel"]);
  expect(run.code, run.stderr).toBe(0);
  const renewed = (await device(machine.deviceId)).certificate;
  expect(renewed.serial).not.toBe(first.serial);
  expect(renewed.revoked).toBe(false);
  // The new certificate on the machine is the one the server lists, signed by the organization's CA.
  const onMachine = readFileSync(join(machine.stateDir, "device.crt"), "utf8");
  expect(certificateFields(onMachine).serial.toLowerCase()).toBe(renewed.serial.toLowerCase());
  const ca = await (
    await fetch(`${server.url}/api/v1/agent/ca.pem`, {
      headers: {
        authorization: `Bearer ${JSON.parse(readFileSync(join(machine.stateDir, "state.json"), "utf8")).device_token}`,
      },
      tls: { ca: serverTls.certificate },
    })
  ).text();
  const verified = opensslVerify(ca, onMachine);
  expect(verified.ok, verified.output).toBe(true);

  // From now on the certificate works again, with no token to lean on.
  spoilToken(machine.stateDir);
  const next = agent(machine, ["run", "--once", "--no-tunnel"]);
  expect(next.code, next.stderr).toBe(0);
  expect(status(machine)).toMatchObject({ credential: "device_certificate", certificate_refused: null });
}, 60_000);

test("a machine clock 340 days ahead of the server's renews and rotates nothing, at any run, and says so", async () => {
  const machine = await enrolledMachine();
  const first = (await device(machine.deviceId)).certificate;
  const token = JSON.parse(readFileSync(join(machine.stateDir, "state.json"), "utf8")).device_token;
  // By this machine's clock the certificate and the token have 25 days left; by the server's, 365.
  for (let run = 0; run < 2; run++) {
    const ran = agent(machine, ["run", "--once", "--no-tunnel"], "+340 days");
    expect(ran.code, ran.stderr).toBe(0);
  }
  expect((await device(machine.deviceId)).certificate.serial).toBe(first.serial);
  expect(JSON.parse(readFileSync(join(machine.stateDir, "state.json"), "utf8")).device_token).toBe(token);
  const rotations = await callServer(
    server,
    "GET",
    "/api/v1/audit-logs?action=device.token_rotate",
    adminToken,
  );
  expect(rotations.data.map((entry: { target: { id: string } }) => entry.target.id)).not.toContain(
    machine.deviceId,
  );
  // Said on the machine and on the device's page.
  expect(agent(machine, ["status"], "+340 days").stdout).toContain(
    "Warning: this machine's clock is 340 days ahead of the server's",
  );
  expect(status(machine).clock_offset_seconds).toBeLessThan(-339 * 86400);
  expect((await device(machine.deviceId)).enforcement.settings).toContainEqual({
    setting: "clock",
    outcome: "reported",
    detail: expect.stringContaining("warning: this machine's clock is 340 days ahead of the server's"),
  });
}, 60_000);

/** libfaketime for a process started directly (the server), as the faketime command sets it. */
function fakeTimeEnvironment(offset: string): Record<string, string> {
  const library = ["/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib"]
    .map((folder) => join(folder, "faketime", "libfaketimeMT.so.1"))
    .find((path) => existsSync(path));
  if (!library) throw new Error("libfaketimeMT.so.1 not found (npm test installs faketime)");
  return { LD_PRELOAD: library, FAKETIME: offset, FAKETIME_DONT_RESET: "1" };
}

test("30 days before it expires by the server's clock the certificate is renewed with a new key made on the machine, once", async () => {
  // A server of its own, started again 340 days on (its clock too), on the same database.
  const own = mkdtempSync(join(tmpdir(), "bulwark-agent-tls-later-"));
  const environment = {
    BULWARK_SERVER_TLS_CERT: join(folder, "server.crt"),
    BULWARK_SERVER_TLS_KEY: join(folder, "server.key"),
    BULWARK_ADMIN_EMAIL: ADMIN.email,
    BULWARK_ADMIN_PASSWORD: ADMIN.password,
    BULWARK_AUTH_PASSWORD_HASH_MEMORY_KIB: "64",
    BULWARK_AUTH_PASSWORD_HASH_ITERATIONS: "1",
  };
  const today = await startServer(binary, own, environment, { ca: serverTls.certificate });
  let later: RunningServer | null = null;
  try {
    const admin = (await callServer(today, "POST", "/api/v1/auth/login", undefined, ADMIN)).token;
    const { token } = await callServer(today, "POST", "/api/v1/enrollment-tokens", admin, {});
    const { machine } = await freshMachine("tls-later");
    const enrolled = agent(machine, [
      "enroll",
      "--server",
      today.url,
      "--token",
      token,
      "--ca-file",
      CA_FILE,
    ]);
    expect(enrolled.code, enrolled.stderr).toBe(0);
    const deviceId = enrolled.stdout.trim();
    const oldKey = readFileSync(join(machine.stateDir, "device.key"), "utf8");
    const first = (await callServer(today, "GET", `/api/v1/devices/${deviceId}`, admin)).certificate;
    await today.stop();

    later = await startServer(
      binary,
      own,
      { ...environment, ...fakeTimeEnvironment("+340d") },
      {
        ca: serverTls.certificate,
      },
    );
    const statePath = join(machine.stateDir, "state.json");
    const state = JSON.parse(readFileSync(statePath, "utf8"));
    writeFileSync(statePath, JSON.stringify({ ...state, server: later.url }), { mode: 0o600 });
    const laterAdmin = (await callServer(later, "POST", "/api/v1/auth/login", undefined, ADMIN)).token;

    const run = agent(machine, ["run", "--once", "--no-tunnel"], "+340 days");
    expect(run.code, run.stderr).toBe(0);
    const renewed = (await callServer(later, "GET", `/api/v1/devices/${deviceId}`, laterAdmin)).certificate;
    expect(renewed.serial).not.toBe(first.serial);
    expect(renewed.revoked).toBe(false);
    expect(readFileSync(join(machine.stateDir, "device.key"), "utf8")).not.toBe(oldKey);
    const audit = await callServer(later, "GET", "/api/v1/audit-logs?action=device.token_rotate", laterAdmin);
    expect(audit.data.map((entry: { target: { id: string } }) => entry.target.id)).toContain(deviceId);
    // Nothing is due at the next run: the certificate is the one in use, and the clocks agree.
    expect(agent(machine, ["run", "--once", "--no-tunnel"], "+340 days").code).toBe(0);
    expect(
      (await callServer(later, "GET", `/api/v1/devices/${deviceId}`, laterAdmin)).certificate.serial,
    ).toBe(renewed.serial);
    const after = JSON.parse(agent(machine, ["status", "--json"], "+340 days").stdout);
    expect(after.credential).toBe("device_certificate");
    expect(Math.abs(after.clock_offset_seconds)).toBeLessThan(60);
  } finally {
    await later?.stop();
    await today.stop();
    rmSync(own, { recursive: true, force: true });
  }
}, 90_000);

test("--ca-sha256 pins the server's CA as the console shows it: the right digest enrolls, another writes nothing", async () => {
  const answer = await fetch(`${server.url}/api/v1/agent/server-ca`, {
    tls: { ca: serverTls.certificate },
  } as RequestInit);
  expect(answer.status).toBe(200);
  const offered = await answer.text();
  const digest = answer.headers.get("x-bulwark-sha256") ?? "";
  // openssl's own reading of the certificate the server offers, as a console would show it.
  const openssl = Bun.spawnSync(["openssl", "x509", "-noout", "-fingerprint", "-sha256"], {
    stdin: Buffer.from(offered),
  });
  const fingerprint = openssl.stdout.toString().trim().split("=")[1] ?? "";
  expect(fingerprint.replaceAll(":", "").toLowerCase()).toBe(digest);

  const { machine, token } = await freshMachine("tls-pinned");
  const pinned = agent(machine, [
    "enroll",
    "--server",
    server.url,
    "--token",
    token,
    "--ca-sha256",
    fingerprint,
  ]);
  expect(pinned.code, pinned.stderr).toBe(0);
  expect(readFileSync(join(machine.stateDir, "server-ca.pem"), "utf8")).toContain(offered.trim());
  machine.deviceId = pinned.stdout.trim();
  expect(agent(machine, ["run", "--once", "--no-tunnel"]).code).toBe(0);

  const other = await freshMachine("tls-wrong-pin");
  const wrong = agent(other.machine, [
    "enroll",
    "--server",
    server.url,
    "--token",
    other.token,
    "--ca-sha256",
    "00".repeat(32),
  ]);
  expect(wrong.code).toBe(4);
  expect(wrong.stderr).toContain("is not the one --ca-sha256 names: this may not be your server");
  expect(existsSync(other.machine.stateDir)).toBe(false);
  // Nothing was enrolled with the token: it still works.
  const retry = agent(other.machine, [
    "enroll",
    "--server",
    server.url,
    "--token",
    other.token,
    "--ca-file",
    CA_FILE,
  ]);
  expect(retry.code, retry.stderr).toBe(0);
}, 60_000);

test("over plain http the certificate cannot be presented: the token is used, and status says why", async () => {
  const plain = await startServer(binary, mkdtempSync(join(tmpdir(), "bulwark-agent-plain-")), {
    BULWARK_ADMIN_EMAIL: ADMIN.email,
    BULWARK_ADMIN_PASSWORD: ADMIN.password,
    BULWARK_AUTH_PASSWORD_HASH_MEMORY_KIB: "64",
    BULWARK_AUTH_PASSWORD_HASH_ITERATIONS: "1",
  });
  try {
    const token = (await callServer(plain, "POST", "/api/v1/auth/login", undefined, ADMIN)).token;
    const enrollment = await callServer(plain, "POST", "/api/v1/enrollment-tokens", token, {});
    const root = buildMachine(OS_RELEASES.debian, ...ROOT_DEVICES.luks, {
      files: {
        "etc/hostname": "plain-laptop\n",
        "etc/machine-id": `${crypto.randomUUID().replaceAll("-", "")}\n`,
      },
    });
    const machine = { root, stateDir: join(mkdtempSync(join(tmpdir(), "bulwark-agent-plain-state-")), "s") };
    expect(agent(machine, ["enroll", "--server", plain.url, "--token", enrollment.token]).code).toBe(0);
    expect(agent(machine, ["run", "--once", "--no-tunnel"]).code).toBe(0);
    expect(status(machine).credential).toBe("device_token");
    expect(agent(machine, ["status"]).stdout).toContain("The server is plain http");
  } finally {
    await plain.stop();
  }
}, 60_000);

test("--ca-file is copied into the state folder: a relative path given to enroll works from any folder, as the service runs", async () => {
  // Given as typed in the folder that holds it; the service starts in /.
  const machine = await enrolledMachine("server-ca.pem");
  const kept = join(machine.stateDir, "server-ca.pem");
  const state = JSON.parse(readFileSync(join(machine.stateDir, "state.json"), "utf8"));
  expect(state.ca_file).toBe(kept);
  expect(statSync(kept).mode & 0o777).toBe(0o600);
  expect(certificateFields(readFileSync(kept, "utf8")).serial).toBe(
    certificateFields(serverTls.certificate).serial,
  );
  const run = agent(machine, ["run", "--once", "--no-tunnel"], undefined, "/");
  expect(run.code, run.stderr).toBe(0);
  // The file enroll was given may go: the copy is what is used.
  const moved = join(folder, "moved-ca.pem");
  writeFileSync(moved, serverTls.certificate);
  const again = await enrolledMachine(moved);
  rmSync(moved);
  expect(agent(again, ["run", "--once", "--no-tunnel"], undefined, "/").code).toBe(0);
}, 60_000);

test("a --ca-file that is not PEM certificates is refused before the server is asked (exit 2, naming it); one that cannot be read at run time is an error naming it", async () => {
  const { machine, token } = await freshMachine("ca-laptop");
  const notPem = join(folder, "not-a-certificate.txt");
  writeFileSync(notPem, "this is not a certificate\n");
  for (const file of [notPem, join(folder, "server.key")]) {
    const refused = agent(machine, ["enroll", "--server", server.url, "--token", token, "--ca-file", file]);
    expect({ file, code: refused.code }).toEqual({ file, code: 2 });
    expectOneLine(refused.stderr, `--ca-file ${file}: holds no PEM certificate`);
    expect(existsSync(machine.stateDir)).toBe(false);
  }
  // The token was not spent on it.
  const enrolled = agent(machine, ["enroll", "--server", server.url, "--token", token, "--ca-file", CA_FILE]);
  expect(enrolled.code, enrolled.stderr).toBe(0);

  // An older state.json names the file it was given; when that is gone, run says which file, not the
  // TLS error the system's trust store would give.
  const statePath = join(machine.stateDir, "state.json");
  const missing = join(folder, "gone-ca.pem");
  const state = JSON.parse(readFileSync(statePath, "utf8"));
  writeFileSync(statePath, JSON.stringify({ ...state, ca_file: missing }), { mode: 0o600 });
  const run = agent(machine, ["run", "--once", "--no-tunnel"]);
  expect(run.code).toBe(1);
  const why = `cannot use the server's CA file ${missing} (ca_file of state.json): no such file`;
  expect(run.stderr).toContain(why);
  expect(run.stderr).not.toContain("self signed");
  expect(status(machine).last_error.message).toContain(why);
  // Such a state.json, its file there, keeps working.
  writeFileSync(statePath, JSON.stringify({ ...state, ca_file: CA_FILE }), { mode: 0o600 });
  const old = agent(machine, ["run", "--once", "--no-tunnel"], undefined, "/");
  expect(old.code, old.stderr).toBe(0);
}, 60_000);

test("an untrusted certificate, or http spoken to the https port: exit 4 with the cause and what to do", async () => {
  const { machine, token } = await freshMachine("tls-words");
  const untrusted = agent(machine, ["enroll", "--server", server.url, "--token", token]);
  expect(untrusted.code).toBe(4);
  expectOneLine(
    untrusted.stderr,
    "the server's TLS certificate is not trusted: pass --ca-file with the CA that signed it (enroll) or fix the system's trust store (self signed certificate)",
  );
  const http = agent(machine, [
    "enroll",
    "--server",
    server.url.replace("https:", "http:"),
    "--token",
    token,
  ]);
  expect(http.code).toBe(4);
  expectOneLine(http.stderr, "the connection was closed: does the server speak https? (ECONNRESET");
  expect(existsSync(machine.stateDir)).toBe(false);
}, 60_000);
