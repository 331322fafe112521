/**
 * Benchmark: builds the executable, starts it on an empty database, enrolls devices through the API,
 * then measures throughput and latency with wrk (Debian package `wrk`) for the hot endpoints, and the
 * server's resident memory. Usage: npm run bench [-- --devices 2000 --seconds 10]
 * Results depend on the machine; they are printed, never asserted.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { $ } from "bun";
import { buildExecutable } from "./build-executable";

const argument = (name: string, fallback: number) => {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? Number(process.argv[index + 1]) : fallback;
};
const deviceCount = argument("devices", 2000);
const seconds = argument("seconds", 10);

if ((await $`which wrk`.nothrow().quiet()).exitCode !== 0) {
  console.error("wrk is not installed (apt-get install wrk)");
  process.exit(1);
}

const folder = mkdtempSync(join(tmpdir(), "bulwark-bench-"));
const binary = join(folder, "bulwark");
await buildExecutable(binary);
const server = Bun.spawn([binary, "serve"], {
  cwd: folder,
  env: {
    PATH: process.env.PATH ?? "",
    BULWARK_SERVER_PORT: "0",
    BULWARK_ADMIN_EMAIL: "bench@example.com",
    BULWARK_ADMIN_PASSWORD: "bench-password-123",
    BULWARK_RATE_LIMIT_AUTHENTICATED_PER_MINUTE: "100000000",
    BULWARK_RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: "100000000",
  },
  stdout: "pipe",
  stderr: "inherit",
});
const reader = (server.stdout as ReadableStream<Uint8Array>).getReader();
let output = "";
let url: string | undefined;
while (!url) {
  const { value, done } = await reader.read();
  if (done) throw new Error(`server exited:\n${output}`);
  output += new TextDecoder().decode(value);
  url = /listening on (http:\/\/[^\s"]+)/.exec(output)?.[1];
}
// The server writes a log line per request: keep reading them, as journald or docker would, so that
// what is measured includes writing the log and a full pipe never holds the server back.
let logBytes = 0;
void (async () => {
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    logBytes += value.byteLength;
  }
})();

function memory(): { rssMib: number; peakMib: number } {
  const status = readFileSync(`/proc/${server.pid}/status`, "utf8");
  const kib = (field: string) => Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return { rssMib: Math.round(kib("VmRSS") / 1024), peakMib: Math.round(kib("VmHWM") / 1024) };
}

async function call(method: string, path: string, body?: unknown, token?: string) {
  const response = await fetch(`${url}${path}`, {
    method,
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  return (await response.json()) as any;
}

const idle = memory();
const { token } = await call("POST", "/api/v1/auth/login", {
  email: "bench@example.com",
  password: "bench-password-123",
});
const enrollmentToken = (await call("POST", "/api/v1/enrollment-tokens", { max_uses: null }, token)).token;
const platforms = ["linux", "windows", "macos", "android", "ios"];
const enrollStarted = performance.now();
let device: { id: string; device_token: string } | undefined;
for (let index = 0; index < deviceCount; index++) {
  device = await call("POST", "/api/v1/devices/enroll", {
    enrollment_token: enrollmentToken,
    device_name: `bench-${index}`,
    platform: platforms[index % platforms.length],
    agent_version: "1.0.0",
    hardware_id: `hw-${index}`,
  });
}
const enrollSeconds = (performance.now() - enrollStarted) / 1000;
if (!device) throw new Error("no device enrolled");

const checkinScript = join(folder, "checkin.lua");
writeFileSync(
  checkinScript,
  `wrk.method = "POST"\nwrk.body = '{"os_version":"14.4","facts":{"disk_encrypted":true,"vpn_connected":true}}'\nwrk.headers["content-type"] = "application/json"\nwrk.headers["authorization"] = "Bearer ${device.device_token}"\n`,
);

async function wrk(name: string, path: string, extra: string[] = []) {
  const result =
    await $`wrk -t2 -c32 -d${seconds}s --latency ${extra} -H ${`authorization: Bearer ${token}`} ${url + path}`
      .quiet()
      .text();
  const rps = /Requests\/sec:\s+([\d.]+)/.exec(result)?.[1];
  const p50 = /^\s+50%\s+(\S+)/m.exec(result)?.[1];
  const p99 = /^\s+99%\s+(\S+)/m.exec(result)?.[1];
  const errors = /Non-2xx or 3xx responses: (\d+)/.exec(result)?.[1] ?? "0";
  console.log(
    `${name.padEnd(34)} ${String(rps).padStart(9)} req/s   p50 ${p50}   p99 ${p99}   non-2xx ${errors}`,
  );
}

console.log(
  `Bulwark benchmark: ${deviceCount} devices, wrk -t2 -c32 -d${seconds}s, ${new Date().toISOString()}`,
);
console.log(
  `enrollment through the API: ${(deviceCount / enrollSeconds).toFixed(0)} devices/s (sequential, one client)`,
);
await wrk("GET /api/v1/health", "/api/v1/health");
await wrk("GET /api/v1/devices?page_size=100", "/api/v1/devices?page_size=100");
await wrk("GET /api/v1/devices?status=online", "/api/v1/devices?status=online&page=3");
await wrk(`GET /api/v1/devices/:id`, `/api/v1/devices/${device.id}`);
await wrk("GET /api/v1/policies", "/api/v1/policies");
await wrk("POST /api/v1/agent/checkin", "/api/v1/agent/checkin", ["-s", checkinScript]);
const loaded = memory();
console.log(
  `memory: idle ${idle.rssMib} MiB RSS; after the runs ${loaded.rssMib} MiB RSS, peak ${loaded.peakMib} MiB`,
);
console.log(`log written: ${(logBytes / 1024 / 1024).toFixed(1)} MiB (a JSON line per request)`);
server.kill("SIGTERM");
await server.exited;
