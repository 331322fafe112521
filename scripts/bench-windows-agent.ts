/**
 * `npm run bench:windows-agent`: the Windows agent's size, and what `agent run --once` costs under
 * Debian's Wine 8.0 (the one Windows here), against a real `bulwark serve`. The executables are built by
 * the same function as `npm run build`. Wine is not Windows: every `reg`, `sc` and `powershell` the
 * agent runs is a Wine process start, so these times say what the agent does under Wine, and an upper
 * bound of its own work; they are printed, never asserted.
 *
 * Usage: npm run bench:windows-agent [-- --runs 10]
 */
import { mkdtempSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { createWinePrefix, removeWinePrefix, runUnderWine, stopWine } from "../test/helpers/wine";
import { call, median, startServer } from "./bench/processes";
import { buildExecutable } from "./build-executable";

const runsIndex = process.argv.indexOf("--runs");
const RUNS = runsIndex >= 0 ? Number(process.argv[runsIndex + 1] ?? 10) : 10;

const folder = mkdtempSync(join(tmpdir(), "bulwark-bench-win-"));
const [linux, windows] = await Promise.all([
  buildExecutable(join(folder, "bulwark")),
  buildExecutable(join(folder, "bulwark-windows-x64.exe"), { target: "windows-x64" }),
]);
const mib = (path: string) => `${(statSync(path).size / 1024 / 1024).toFixed(1)} MiB`;

const admin = { email: "bench-windows@example.com", password: "correct-horse-battery" };
const data = mkdtempSync(join(tmpdir(), "bulwark-bench-win-server-"));
const server = await startServer([linux, "serve"], {
  cwd: data,
  env: {
    HOME: data,
    BULWARK_SERVER_PORT: "0",
    BULWARK_DATABASE_PATH: join(data, "bulwark.db"),
    BULWARK_ADMIN_EMAIL: admin.email,
    BULWARK_ADMIN_PASSWORD: admin.password,
    BULWARK_VPN_ENDPOINT: "vpn.bench.example:51820",
  },
});
const adminToken = (await call(server, "POST", "/api/v1/auth/login", admin)).body.token as string;
const policy = (await call(server, "GET", "/api/v1/policies/default", undefined, adminToken)).body;
await call(
  server,
  "PUT",
  `/api/v1/policies/${policy.id}`,
  {
    policy_data: {
      storage: { external_storage_allowed: false },
      network: { blocked_domains: Array.from({ length: 100 }, (_, index) => `blocked-${index}.example.net`) },
      usb: { allowed: false, whitelist: ["046d:c52b"], allowed_classes: ["hid", "audio"], audit_only: false },
    },
  },
  adminToken,
);
const prefix = createWinePrefix();

/** Wall time of one command under Wine, in ms, Wine's own server already running. */
async function timed(argv: string[]): Promise<number> {
  const started = performance.now();
  const result = await runUnderWine(prefix, argv, { timeoutMs: 300_000 });
  if (result.code !== 0) throw new Error(`${argv.join(" ")}: exit ${result.code}: ${result.stderr}`);
  return performance.now() - started;
}

try {
  // Wine's server started once, as it stays between commands.
  await timed(["cmd", "/c", "exit 0"]);
  const floor = median(await sequence(RUNS, () => timed([windows, "--version"])));
  const token = (await call(server, "POST", "/api/v1/enrollment-tokens", {}, adminToken)).body
    .token as string;
  const enroll = await timed([windows, "agent", "enroll", "--server", server.url, "--token", token]);
  const first = await timed([windows, "agent", "run", "--once", "--no-tunnel"]);
  const steady = median(
    await sequence(RUNS, () => timed([windows, "agent", "run", "--once", "--no-tunnel"])),
  );
  const facts = median(await sequence(RUNS, () => timed([windows, "agent", "facts"])));
  const rows = [
    ["bulwark-windows-x64.exe", mib(windows)],
    ["dist/bulwark (Linux, the same source)", mib(linux)],
    ["`bulwark.exe --version` under Wine (process start; median)", `${floor.toFixed(0)} ms`],
    ["`agent enroll` under Wine", `${enroll.toFixed(0)} ms`],
    ["first `agent run --once --no-tunnel` (applies the policy, reports twice)", `${first.toFixed(0)} ms`],
    [`\`agent run --once --no-tunnel\`, nothing to change (median of ${RUNS})`, `${steady.toFixed(0)} ms`],
    [`\`agent facts\` (median of ${RUNS})`, `${facts.toFixed(0)} ms`],
  ];
  console.log("\n| measure | measured |\n|---|---|");
  for (const [measure, value] of rows) console.log(`| ${measure} | ${value} |`);
} finally {
  stopWine(prefix);
  removeWinePrefix(prefix);
  await server.stop();
}

async function sequence(count: number, step: () => Promise<number>): Promise<number[]> {
  const results: number[] = [];
  for (let index = 0; index < count; index++) results.push(await step());
  return results;
}
