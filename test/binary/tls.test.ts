/**
 * Bulwark terminating TLS itself (server.tls_cert, server.tls_key), against the built executable: the
 * API answers over HTTPS only, and an agent authenticates with its device certificate in the TLS
 * handshake. The client is curl (`--cert`), the certificates openssl's.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { connect as netConnect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { connect as tlsConnect } from "node:tls";
import { buildBinary, callServer as call, type RunningServer, startServer } from "../helpers/binary";
import { forgeCertificate, makeCsr, opensslVerify, selfSignedCertificate } from "../helpers/pki";

const ADMIN = { email: "tls@example.com", password: "tls-password-123" };
const folder = mkdtempSync(join(tmpdir(), "bulwark-tls-"));
let binary: string;
let server: RunningServer;
let adminToken: string;

/** A self-signed server certificate for localhost and 127.0.0.1, made by openssl. */
function serverCertificate(): { cert: string; key: string } {
  const { certificate, key } = selfSignedCertificate("/CN=localhost", "DNS:localhost,IP:127.0.0.1");
  return { cert: certificate, key };
}

const tls = serverCertificate();
writeFileSync(join(folder, "server.crt"), tls.cert);
writeFileSync(join(folder, "server.key"), tls.key);
const TLS_ENV = {
  BULWARK_SERVER_TLS_CERT: join(folder, "server.crt"),
  BULWARK_SERVER_TLS_KEY: join(folder, "server.key"),
  BULWARK_ADMIN_EMAIL: ADMIN.email,
  BULWARK_ADMIN_PASSWORD: ADMIN.password,
};

/** Writes a file into the test folder (mode 600) and returns its path. */
function writeTemp(name: string, text: string): string {
  const path = join(folder, `${crypto.randomUUID()}-${name}`);
  writeFileSync(path, text, { mode: 0o600 });
  return path;
}

/** curl over HTTPS trusting the test certificate; `--cert`/`--key` when a client certificate is given. */
function curl(path: string, options: { body?: unknown; token?: string; cert?: string; key?: string } = {}) {
  const files: string[] = [];
  const file = (name: string, text: string) => {
    const path = join(folder, `${crypto.randomUUID()}-${name}`);
    writeFileSync(path, text, { mode: 0o600 });
    files.push(path);
    return path;
  };
  const args = ["curl", "-sS", "--cacert", join(folder, "server.crt"), "-w", "\n%{http_code}"];
  if (options.cert && options.key)
    args.push("--cert", file("cert.pem", options.cert), "--key", file("key.pem", options.key));
  if (options.token) args.push("-H", `authorization: Bearer ${options.token}`);
  if (options.body !== undefined)
    args.push("-H", "content-type: application/json", "--data-binary", JSON.stringify(options.body));
  const run = Bun.spawnSync([...args, `${server.url}${path}`], { stdout: "pipe", stderr: "pipe" });
  for (const path of files) rmSync(path, { force: true });
  const output = run.stdout.toString();
  const newline = output.lastIndexOf("\n");
  const text = output.slice(0, newline);
  return {
    exitCode: run.exitCode,
    stderr: run.stderr.toString(),
    status: Number(output.slice(newline + 1)),
    body: text ? JSON.parse(text) : null,
  };
}

async function enrollWithCertificate() {
  const { token } = await call(server, "POST", "/api/v1/enrollment-tokens", adminToken, {});
  const { key, csr } = makeCsr("p256");
  const enrolled = await call(server, "POST", "/api/v1/devices/enroll", undefined, {
    enrollment_token: token,
    device_name: "TLS laptop",
    platform: "linux",
    agent_version: "1.0.0",
    hardware_id: `hw-${crypto.randomUUID()}`,
    csr,
  });
  return { ...enrolled, key, certificate: enrolled.device_certificate as string };
}

beforeAll(async () => {
  binary = await buildBinary();
  server = await startServer(binary, folder, TLS_ENV, { ca: tls.cert });
  adminToken = (await call(server, "POST", "/api/v1/auth/login", undefined, ADMIN)).token;
}, 120_000);

afterAll(async () => {
  await server?.stop();
  rmSync(folder, { recursive: true, force: true });
});

describe("with server.tls_cert and server.tls_key", () => {
  test("the API answers over HTTPS, and plain HTTP on that port gets no answer", async () => {
    expect(server.url).toStartWith("https://127.0.0.1:");
    expect(curl("/api/v1/health").status).toBe(200);
    const plain = Bun.spawnSync(
      ["curl", "-sS", server.url.replace("https://", "http://") + "/api/v1/health"],
      {
        stdout: "pipe",
        stderr: "pipe",
      },
    );
    expect(plain.exitCode).not.toBe(0);
    expect(plain.stdout.toString()).toBe("");
  });

  test("an agent checks in with its device certificate in the handshake (curl --cert)", async () => {
    const enrolled = await enrollWithCertificate();
    const caResponse = await fetch(`${server.url}/api/v1/agent/ca.pem`, {
      headers: { authorization: `Bearer ${enrolled.device_token}` },
      tls: { ca: tls.cert },
    });
    const ca = await caResponse.text();
    expect(opensslVerify(ca, enrolled.certificate).ok).toBe(true);
    const checkIn = curl("/api/v1/agent/checkin", {
      body: {},
      cert: enrolled.certificate,
      key: enrolled.key,
    });
    expect(checkIn.status).toBe(200);
    expect(checkIn.body.device_id).toBe(enrolled.id);
    // Without a certificate, the device token still works: certificates are requested, not required.
    const byToken = curl("/api/v1/agent/checkin", { body: {}, token: enrolled.device_token });
    expect(byToken.status).toBe(200);
    // And a user signs in without any client certificate.
    expect(curl("/api/v1/users/me", { token: adminToken }).status).toBe(200);
  });

  test("another CA's certificate naming the device, a revoked one, or none at all: 401", async () => {
    const enrolled = await enrollWithCertificate();
    const forged = forgeCertificate(enrolled.id, "Default");
    const byForgery = curl("/api/v1/agent/checkin", { body: {}, cert: forged.certificate, key: forged.key });
    expect(byForgery.status).toBe(401);
    expect(byForgery.body.reason).toBe("client_certificate_unknown");
    expect(curl("/api/v1/agent/checkin", { body: {} }).status).toBe(401);

    await call(server, "PUT", `/api/v1/devices/${enrolled.id}/status`, adminToken, {
      status: "suspended",
      reason: "stolen",
    });
    const revoked = curl("/api/v1/agent/checkin", {
      body: {},
      cert: enrolled.certificate,
      key: enrolled.key,
    });
    expect(revoked.status).toBe(401);
    expect(revoked.body.reason).toBe("client_certificate_revoked");
  });

  test("a Client-Cert header sent straight to the server is ignored without trust_proxy", async () => {
    const enrolled = await enrollWithCertificate();
    const der = enrolled.certificate.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "");
    const response = await fetch(`${server.url}/api/v1/agent/checkin`, {
      method: "POST",
      headers: { "content-type": "application/json", "client-cert": `:${der}:` },
      body: "{}",
      tls: { ca: tls.cert },
    });
    expect(response.status).toBe(401);
  });
});

describe("the certificate reaches the app whatever the request looks like, and only from the handshake", () => {
  test("a short Host header (the request is copied before routing) still carries the certificate", async () => {
    const enrolled = await enrollWithCertificate();
    for (const host of ["vpn", "x:1", "mdm.corp.example"]) {
      const run = Bun.spawnSync(
        [
          "curl",
          "-sS",
          "-o",
          "/dev/null",
          "-w",
          "%{http_code}",
          "--cacert",
          join(folder, "server.crt"),
          "--cert",
          writeTemp("c.pem", enrolled.certificate),
          "--key",
          writeTemp("k.pem", enrolled.key),
          "--resolve",
          `${host.split(":")[0]}:${new URL(server.url).port}:127.0.0.1`,
          "-k",
          "-H",
          `host: ${host}`,
          "-H",
          "content-type: application/json",
          "-d",
          "{}",
          `${server.url}/api/v1/agent/checkin`,
        ],
        { stdout: "pipe", stderr: "pipe" },
      );
      expect({ host, status: run.stdout.toString() }).toEqual({ host, status: "200" });
    }
  });

  test("a local process connecting to the internal HTTP port from 127.0.0.2 on a TLS client's port gets no certificate", async () => {
    const enrolled = await enrollWithCertificate();
    // A device keeps a TLS connection with its certificate open...
    const device = tlsConnect({
      host: "127.0.0.1",
      port: Number(new URL(server.url).port),
      ca: tls.cert,
      cert: enrolled.certificate,
      key: enrolled.key,
      servername: "localhost",
    });
    await new Promise<void>((resolve, reject) => device.once("secureConnect", resolve).once("error", reject));
    device.write("GET /api/v1/health HTTP/1.1\r\nhost: localhost\r\n\r\n");
    await new Promise((resolve) => device.once("data", resolve));
    // ...so the front holds a loopback connection 127.0.0.1:P -> 127.0.0.1:U to the HTTP server.
    const pid = server.process.pid;
    const sockets = (args: string[]) =>
      Bun.spawnSync(["ss", "-Htnp", ...args], { stdout: "pipe" })
        .stdout.toString()
        .split("\n")
        .filter((line) => line.includes(`pid=${pid},`));
    const publicPort = new URL(server.url).port;
    const internalPort = sockets(["-l"])
      .map((line) => /127\.0\.0\.1:(\d+)/.exec(line)?.[1])
      .find((port) => port && port !== publicPort);
    const frontPorts = sockets(["state", "established"])
      .map(
        (line) => new RegExp(`127\\.0\\.0\\.1:(\\d+)\\s+127\\.0\\.0\\.1:${internalPort}\\b`).exec(line)?.[1],
      )
      .filter((port): port is string => port !== undefined);
    expect(internalPort).toBeDefined();
    expect(frontPorts.length).toBeGreaterThan(0);
    // Another process connects from 127.0.0.2 with the port number of each of the front's connections
    // (one of them is the device's) and asks without credentials.
    const statuses: string[] = [];
    for (const frontPort of frontPorts) {
      const intruder = netConnect({
        host: "127.0.0.1",
        port: Number(internalPort),
        localAddress: "127.0.0.2",
        localPort: Number(frontPort),
      });
      await new Promise<void>((resolve, reject) => intruder.once("connect", resolve).once("error", reject));
      intruder.write(
        "POST /api/v1/agent/checkin HTTP/1.1\r\nhost: localhost\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}",
      );
      let answer = "";
      intruder.on("data", (chunk) => {
        answer += chunk.toString();
      });
      await new Promise((resolve) => intruder.once("close", resolve));
      statuses.push(answer.split("\r\n")[0] ?? "");
    }
    device.destroy();
    expect(new Set(statuses)).toEqual(new Set(["HTTP/1.1 401 Unauthorized"]));
  });
});

test("with built-in TLS, a Client-Cert header is ignored even with trust_proxy: the handshake is the one source", async () => {
  const other = mkdtempSync(join(tmpdir(), "bulwark-tls-proxy-"));
  const proxied = await startServer(
    binary,
    other,
    { ...TLS_ENV, BULWARK_SERVER_TRUST_PROXY: "true" },
    { ca: tls.cert },
  );
  try {
    const { token } = await call(proxied, "POST", "/api/v1/auth/login", undefined, ADMIN);
    const enrollment = await call(proxied, "POST", "/api/v1/enrollment-tokens", token, {});
    const { csr } = makeCsr("p256");
    const device = await call(proxied, "POST", "/api/v1/devices/enroll", undefined, {
      enrollment_token: enrollment.token,
      device_name: "Header laptop",
      platform: "linux",
      agent_version: "1.0.0",
      hardware_id: `hw-${crypto.randomUUID()}`,
      csr,
    });
    // The certificate is public (it travels in clear in TLS 1.2, proxies log it): without its key, nothing.
    const der = device.device_certificate.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "");
    const response = await fetch(`${proxied.url}/api/v1/agent/checkin`, {
      method: "POST",
      headers: { "content-type": "application/json", "client-cert": `:${der}:` },
      body: "{}",
      tls: { ca: tls.cert },
    });
    expect(response.status).toBe(401);
  } finally {
    await proxied.stop();
    rmSync(other, { recursive: true, force: true });
  }
});

describe("TLS settings that cannot work stop the start with a message naming them", () => {
  test.each([
    ["a missing certificate file", { BULWARK_SERVER_TLS_CERT: "/nonexistent/cert.pem" }, "server.tls_cert"],
    ["a key that is not the certificate's", { BULWARK_SERVER_TLS_KEY: "other.key" }, "server.tls_key"],
  ])("%s", async (_, env, key) => {
    const other = mkdtempSync(join(tmpdir(), "bulwark-tls-bad-"));
    try {
      writeFileSync(join(other, "other.key"), serverCertificate().key);
      const run = Bun.spawnSync([binary, "serve"], {
        cwd: other,
        env: { PATH: process.env.PATH ?? "", HOME: other, BULWARK_SERVER_PORT: "0", ...TLS_ENV, ...env },
        stdout: "pipe",
        stderr: "pipe",
        timeout: 15_000,
      });
      expect(run.exitCode).not.toBe(0);
      expect(`${run.stdout}${run.stderr}`).toContain(key);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});
