/**
 * deploy/haproxy.cfg, as shipped, in front of the executable with server.trust_proxy: HAProxy checks
 * the agent's certificate in its handshake and forwards it in RFC 9440's Client-Cert header; a header
 * the client wrote itself never gets through. The client is curl, the certificates openssl's.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildBinary, callServer as call, type RunningServer, startServer } from "../helpers/binary";
import { clientCertHeader, enrollWithCertificate, selfSignedCertificate } from "../helpers/pki";

const ADMIN = { email: "proxy@example.com", password: "proxy-password-123" };
const folder = mkdtempSync(join(tmpdir(), "bulwark-proxy-"));
const PROXY_PORT = 20_000 + Math.floor(Math.random() * 20_000);
let server: RunningServer;
let proxy: ReturnType<typeof Bun.spawn> | undefined;
let device: { key: string; certificate: string; id: string };

function file(name: string, text: string): string {
  const path = join(folder, name);
  writeFileSync(path, text, { mode: 0o600 });
  return path;
}

/** curl through the proxy, trusting its test certificate. */
function curl(
  path: string,
  options: { cert?: string; key?: string; headers?: string[]; post?: boolean } = {},
) {
  const args = ["curl", "-sS", "--cacert", join(folder, "site.crt"), "-w", "\n%{http_code}"];
  if (options.cert && options.key)
    args.push("--cert", file("c.pem", options.cert), "--key", file("k.pem", options.key));
  for (const header of options.headers ?? []) args.push("-H", header);
  if (options.post !== false) args.push("-H", "content-type: application/json", "-d", "{}");
  args.push(`https://localhost:${PROXY_PORT}${path}`);
  const output = Bun.spawnSync(args, { stdout: "pipe", stderr: "pipe" }).stdout.toString();
  const newline = output.lastIndexOf("\n");
  return { status: Number(output.slice(newline + 1)), body: JSON.parse(output.slice(0, newline) || "null") };
}

beforeAll(async () => {
  const binary = await buildBinary();
  server = await startServer(binary, folder, {
    BULWARK_SERVER_TRUST_PROXY: "true",
    BULWARK_ADMIN_EMAIL: ADMIN.email,
    BULWARK_ADMIN_PASSWORD: ADMIN.password,
  });
  const { token, user } = await call(server, "POST", "/api/v1/auth/login", undefined, ADMIN);
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
    .replace("127.0.0.1:8080", `127.0.0.1:${upstream.port}`);
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
