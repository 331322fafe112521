/**
 * deploy/haproxy.cfg, as shipped, in front of the executable with server.trust_proxy: HAProxy checks
 * the agent's certificate in its handshake and forwards it in RFC 9440's Client-Cert header; a header
 * the client wrote itself never gets through. The client is curl, the certificates openssl's.
 *
 * HAProxy stands for a proxy on another host: it connects from 127.0.0.2, the one address in
 * server.trusted_proxies, while a client that reaches Bulwark's port itself connects from 127.0.0.1
 * and must get nothing from the forwarded headers (Linux routes all of 127.0.0.0/8 to loopback).
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildBinary, callServer as call, type RunningServer, startServer } from "../helpers/binary";
import { clientCertHeader, enrollWithCertificate, selfSignedCertificate } from "../helpers/pki";

const ADMIN = { email: "proxy@example.com", password: "proxy-password-123" };
const PROXY_ADDRESS = "127.0.0.2";
const folder = mkdtempSync(join(tmpdir(), "bulwark-proxy-"));
const PROXY_PORT = 20_000 + Math.floor(Math.random() * 20_000);
let server: RunningServer;
let proxy: ReturnType<typeof Bun.spawn> | undefined;
let device: { key: string; certificate: string; id: string };
let adminToken: string;

function file(name: string, text: string): string {
  const path = join(folder, name);
  writeFileSync(path, text, { mode: 0o600 });
  return path;
}

/**
 * curl through the proxy, trusting its test certificate; `direct` talks to Bulwark's own port instead,
 * from the address `from` (127.0.0.1 unless given).
 */
function curl(
  path: string,
  options: {
    cert?: string;
    key?: string;
    headers?: string[];
    post?: boolean;
    body?: unknown;
    from?: string;
    direct?: boolean;
  } = {},
) {
  const args = ["curl", "-sS", "--cacert", join(folder, "site.crt"), "-w", "\n%{http_code}"];
  args.push("--interface", options.from ?? "127.0.0.1");
  if (options.cert && options.key)
    args.push("--cert", file("c.pem", options.cert), "--key", file("k.pem", options.key));
  for (const header of options.headers ?? []) args.push("-H", header);
  if (options.post !== false)
    args.push("-H", "content-type: application/json", "-d", JSON.stringify(options.body ?? {}));
  args.push(options.direct ? `${server.url}${path}` : `https://localhost:${PROXY_PORT}${path}`);
  const output = Bun.spawnSync(args, { stdout: "pipe", stderr: "pipe" }).stdout.toString();
  const newline = output.lastIndexOf("\n");
  return { status: Number(output.slice(newline + 1)), body: JSON.parse(output.slice(0, newline) || "null") };
}

/** The address the audit log recorded for the newest sign-in. */
async function lastSignInAddress(): Promise<string> {
  const audit = await call(server, "GET", "/api/v1/audit-logs?action=auth.login&page_size=1", adminToken);
  return audit.data[0].ip;
}

beforeAll(async () => {
  const binary = await buildBinary();
  server = await startServer(binary, folder, {
    BULWARK_SERVER_TRUST_PROXY: "true",
    BULWARK_SERVER_TRUSTED_PROXIES: PROXY_ADDRESS,
    BULWARK_ADMIN_EMAIL: ADMIN.email,
    BULWARK_ADMIN_PASSWORD: ADMIN.password,
  });
  const { token, user } = await call(server, "POST", "/api/v1/auth/login", undefined, ADMIN);
  adminToken = token;
  const enrolled = await enrollWithCertificate(server, token, user.organization_id, {
    name: "Proxied laptop",
    platform: "windows",
  });
  device = enrolled.device;
  const ca = enrolled.ca;

  const site = selfSignedCertificate("/CN=localhost", "DNS:localhost");
  file("site.crt", site.certificate);
  file("site.pem", `${site.certificate}${site.key}`);
  file("device-ca.pem", ca);
  const upstream = new URL(server.url);
  const config = readFileSync(join(import.meta.dir, "../../deploy/haproxy.cfg"), "utf8")
    .replaceAll("/etc/haproxy/bulwark.pem", join(folder, "site.pem"))
    .replaceAll("/etc/haproxy/bulwark-device-ca.pem", join(folder, "device-ca.pem"))
    .replace("bind :443", `bind 127.0.0.1:${PROXY_PORT}`)
    .replace("127.0.0.1:8080", `127.0.0.1:${upstream.port} source ${PROXY_ADDRESS}`);
  const check = Bun.spawnSync(["haproxy", "-c", "-f", file("haproxy.cfg", config)], {
    stderr: "pipe",
    stdout: "pipe",
  });
  if (check.exitCode !== 0) throw new Error(`haproxy -c: ${check.stdout}${check.stderr}`);
  proxy = Bun.spawn(["haproxy", "-f", join(folder, "haproxy.cfg")], { stdout: "ignore", stderr: "ignore" });
  // Until its health check has seen Bulwark, HAProxy answers 503.
  const deadline = Date.now() + 15_000;
  while (curl("/api/v1/health", { post: false }).status !== 200) {
    if (Date.now() > deadline) throw new Error("HAProxy did not come up");
    await Bun.sleep(100);
  }
}, 120_000);

afterAll(async () => {
  proxy?.kill();
  await proxy?.exited;
  await server?.stop();
  rmSync(folder, { recursive: true, force: true });
});

test("the agent's certificate, checked by HAProxy, authenticates it through Client-Cert", () => {
  const response = curl("/api/v1/agent/checkin", { cert: device.certificate, key: device.key });
  expect(response.status).toBe(200);
  expect(response.body.device_id).toBe(device.id);
});

test("a Client-Cert header the client wrote is removed by the proxy: 401", () => {
  const response = curl("/api/v1/agent/checkin", {
    headers: [`client-cert: ${clientCertHeader(device.certificate)}`],
  });
  expect(response.status).toBe(401);
  expect(response.body.reason).toBe("device_token_required");
});

test("through the trusted proxy, the client's address is the one HAProxy forwarded", async () => {
  const login = curl("/api/v1/auth/login", { body: ADMIN, from: "127.0.0.3" });
  expect(login.status).toBe(200);
  expect(await lastSignInAddress()).toBe("127.0.0.3");
});

test("a client reaching Bulwark's port itself cannot sign in as a device with its certificate in Client-Cert", async () => {
  // The certificate is public (the device shows it in every handshake); its private key stays on the device.
  const response = await fetch(`${server.url}/api/v1/agent/checkin`, {
    method: "POST",
    headers: { "content-type": "application/json", "client-cert": clientCertHeader(device.certificate) },
    body: "{}",
  });
  expect(response.status).toBe(401);
  expect(((await response.json()) as { reason: string }).reason).toBe("device_token_required");
});

test("a client reaching Bulwark's port itself cannot choose its address with X-Forwarded-For", async () => {
  const attempt = (password: string, index: number) =>
    fetch(`${server.url}/api/v1/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-forwarded-for": `198.51.100.${index}` },
      body: JSON.stringify({ email: ADMIN.email, password }),
    });
  for (let index = 1; index <= 5; index++) expect((await attempt("wrong-password", index)).status).toBe(401);
  // Five failures from 127.0.0.1, whatever the header said: that address is locked out for this email.
  const locked = await attempt(ADMIN.password, 6);
  expect(locked.status).toBe(429);
  expect(((await locked.json()) as { reason: string }).reason).toBe("login_throttled");
  expect(await lastSignInAddress()).toBe("127.0.0.1");
}, 30_000);

test("an X-Forwarded-For value that is not an IP address is ignored, even from the trusted proxy", async () => {
  const markup = "<img src=x onerror=alert(1)>";
  const login = curl("/api/v1/auth/login", {
    body: ADMIN,
    headers: [`x-forwarded-for: ${markup}`],
    from: PROXY_ADDRESS,
    direct: true,
  });
  expect(login.status).toBe(200);
  expect(await lastSignInAddress()).toBe(PROXY_ADDRESS);
  expect(server.output()).not.toContain("<img");
});

test("trust_proxy with no trusted_proxies on an address other machines reach: a warning at start", async () => {
  const elsewhere = mkdtempSync(join(tmpdir(), "bulwark-proxy-wildcard-"));
  const wildcard = await startServer(await buildBinary(), elsewhere, {
    BULWARK_SERVER_HOST: "0.0.0.0",
    BULWARK_SERVER_TRUST_PROXY: "true",
  });
  try {
    // Logged just after the listening line, which is all startServer waits for: read until it is there.
    const warning = "server.trust_proxy honours X-Forwarded-For and Client-Cert from loopback peers only";
    for (let waited = 0; !wildcard.output().includes(warning) && waited < 5_000; waited += 50)
      await Bun.sleep(50);
    expect(wildcard.output()).toContain(warning);
    expect(server.output()).not.toContain("server.trust_proxy honours");
  } finally {
    await wildcard.stop();
    rmSync(elsewhere, { recursive: true, force: true });
  }
});
