/**
 * What Bulwark's own TLS costs per request: the node:tls front that terminates TLS (and reads the
 * client certificate) and hands each connection to Bun.serve over loopback. Measured with wrk (Debian
 * package `wrk`, keep-alive connections) against, in the same run:
 *   - raw Bun.serve answering a small JSON object, over plain HTTP and with Bun's own TLS;
 *   - the same raw server behind the TLS front (the front's cost alone);
 *   - the executable's GET /api/v1/health over plain HTTP and over HTTPS.
 * Usage: bun run scripts/bench-tls.ts [-- --seconds 5 --connections 16]. Printed, never asserted.
 */
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { $ } from "bun";
import { startTlsFront, TlsClients } from "../src/http/tls-front";
import { buildExecutable } from "./build-executable";

const argument = (name: string, fallback: number) => {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? Number(process.argv[index + 1]) : fallback;
};
const seconds = argument("seconds", 5);
const connections = argument("connections", 16);
if ((await $`which wrk`.nothrow().quiet()).exitCode !== 0) {
  console.error("wrk is not installed (apt-get install wrk)");
  process.exit(1);
}

const folder = mkdtempSync(join(tmpdir(), "bulwark-bench-tls-"));
await $`openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 2 -subj /CN=localhost -keyout ${join(folder, "key.pem")} -out ${join(folder, "cert.pem")}`.quiet();
const tls = { cert: readFileSync(join(folder, "cert.pem")), key: readFileSync(join(folder, "key.pem")) };

async function wrk(url: string): Promise<{ requests: number; p50: string; p99: string }> {
  const output = await $`wrk -t1 -c${connections} -d${seconds}s --latency ${url}`.text();
  const requests = Number(/Requests\/sec:\s+([\d.]+)/.exec(output)?.[1] ?? 0);
  const p50 = /50%\s+(\S+)/.exec(output)?.[1] ?? "?";
  const p99 = /99%\s+(\S+)/.exec(output)?.[1] ?? "?";
  return { requests, p50, p99 };
}

const rows: [string, Awaited<ReturnType<typeof wrk>>][] = [];
const answer = () => Response.json({ status: "ok", version: "bench" });
const plain = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: answer });
const bunTls = Bun.serve({ port: 0, hostname: "127.0.0.1", fetch: answer, tls });
const front = await startTlsFront({
  hostname: "127.0.0.1",
  port: 0,
  certFile: join(folder, "cert.pem"),
  keyFile: join(folder, "key.pem"),
  upstreamPort: plain.port ?? 0,
  clients: new TlsClients(),
});
rows.push(["raw Bun.serve, plain HTTP", await wrk(`http://127.0.0.1:${plain.port}/`)]);
rows.push(["raw Bun.serve, Bun's TLS", await wrk(`https://127.0.0.1:${bunTls.port}/`)]);
rows.push(["raw Bun.serve behind the node:tls front", await wrk(`https://127.0.0.1:${front.port}/`)]);
await front.stop();
plain.stop(true);
bunTls.stop(true);

async function startExecutable(
  binary: string,
  env: Record<string, string>,
): Promise<{ url: string; stop: () => void }> {
  const data = mkdtempSync(join(folder, "data-"));
  const child = Bun.spawn([binary, "serve"], {
    cwd: data,
    env: {
      PATH: process.env.PATH ?? "",
      BULWARK_SERVER_PORT: "0",
      BULWARK_RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: "100000000",
      ...env,
    },
    stdout: "pipe",
    stderr: "inherit",
  });
  const reader = (child.stdout as ReadableStream<Uint8Array>).getReader();
  let output = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`server exited:\n${output}`);
    output += new TextDecoder().decode(value);
    const url = /listening on (https?:\/\/[^\s"]+)/.exec(output)?.[1];
    if (url) return { url, stop: () => child.kill() };
  }
}

const binary = join(folder, "bulwark");
await buildExecutable(binary);
const http = await startExecutable(binary, {});
rows.push(["bulwark GET /api/v1/health, plain HTTP", await wrk(`${http.url}/api/v1/health`)]);
http.stop();
const https = await startExecutable(binary, {
  BULWARK_SERVER_TLS_CERT: join(folder, "cert.pem"),
  BULWARK_SERVER_TLS_KEY: join(folder, "key.pem"),
});
rows.push(["bulwark GET /api/v1/health, HTTPS (front)", await wrk(`${https.url}/api/v1/health`)]);
https.stop();

console.log(`wrk -t1 -c${connections} -d${seconds}s, keep-alive`);
console.log("| measure | req/s | p50 | p99 |\n|---|---|---|---|");
for (const [name, result] of rows)
  console.log(
    `| ${name} | ${Math.round(result.requests).toLocaleString("en")} | ${result.p50} | ${result.p99} |`,
  );
