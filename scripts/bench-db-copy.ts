/**
 * How long `bulwark db copy` takes each way for a populated installation: the executable built as `npm
 * run build` builds it, one device enrolled and checked in through the API, then grown by SQL copies of
 * it (scripts/bench/seed-devices.ts, with a token each) and two log entries per device; copied SQLite ->
 * PostgreSQL (a throwaway cluster from test/helpers/pg-cluster.ts: fsync off) and back into a new SQLite
 * file, `--rounds` times each.
 *
 *   bun run scripts/bench-db-copy.ts [--devices 20000] [--rounds 3]
 */
import { Database } from "bun:sqlite";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { startPgCluster } from "../test/helpers/pg-cluster";
import { startServer } from "./bench/processes";
import { seedDevices } from "./bench/seed-devices";
import { buildExecutable } from "./build-executable";

const option = (name: string, fallback: string) => {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? (process.argv[index + 1] ?? fallback) : fallback;
};
const deviceCount = Number(option("devices", "20000"));
const rounds = Number(option("rounds", "3"));

const folder = mkdtempSync(join(tmpdir(), "bulwark-bench-copy-"));
const binary = join(folder, "bulwark");
await buildExecutable(binary);
const service = join(folder, "service");
mkdirSync(service);
const database = join(service, "bulwark.db");
const ADMIN = { email: "bench@example.com", password: "bench-password-123" };
const server = await startServer([binary, "serve"], {
  cwd: service,
  env: {
    BULWARK_SERVER_PORT: "0",
    BULWARK_DATABASE_PATH: database,
    BULWARK_ADMIN_EMAIL: ADMIN.email,
    BULWARK_ADMIN_PASSWORD: ADMIN.password,
    BULWARK_VPN_ADDRESS_POOL: "10.0.0.0/8",
    BULWARK_VPN_ORGANIZATION_PREFIX_LENGTH: "8",
  },
});
const call = async (path: string, body: unknown, token?: string) => {
  const response = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(body),
  });
  if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
  return await response.json();
};
const { token } = await call("/api/v1/auth/login", ADMIN);
const enrollment = await call("/api/v1/enrollment-tokens", { max_uses: null }, token);
const template = await call("/api/v1/devices/enroll", {
  enrollment_token: enrollment.token,
  device_name: "bench-template",
  platform: "macos",
  agent_version: "1.0.0",
  hardware_id: "bench-template",
});
await call(
  "/api/v1/agent/checkin",
  { agent_version: "1.0.0", facts: { disk_encrypted: true, firewall_enabled: true } },
  template.device_token,
);
await server.stop();

seedDevices({
  path: database,
  templateDeviceId: template.id ?? template.device_id,
  from: 1,
  to: deviceCount,
  tokenCount: deviceCount,
});
const seeded = new Database(database);
for (const event of ["device.enrolled", "device.checkin"])
  seeded
    .query(
      `INSERT INTO device_logs (id, device_id, event, details, created_at)
       SELECT lower(hex(randomblob(16))), id, ?, '{"agent_version":"1.0.0"}', enrolled_at FROM devices ORDER BY rowid`,
    )
    .run(event);
seeded.exec("PRAGMA wal_checkpoint(TRUNCATE)");
seeded.close();

/** `db copy` run to its end: wall-clock seconds and the rows it says it copied. */
function copy(from: string, to: string): { seconds: number; rows: number } {
  const started = performance.now();
  const run = Bun.spawnSync(
    [binary, "db", "copy", "--from", from, "--to", to, "--key-file", `${database}.key`],
    {
      env: { PATH: process.env.PATH ?? "" },
    },
  );
  const seconds = (performance.now() - started) / 1000;
  if (run.exitCode !== 0) throw new Error(`db copy ${from} -> ${to} failed:\n${run.stderr}${run.stdout}`);
  const rows = Number(/: ([\d,]+) rows in/.exec(run.stdout.toString())?.[1]?.replaceAll(",", ""));
  return { seconds, rows };
}

const cluster = await startPgCluster();
const results: Record<string, number[]> = { "SQLite -> PostgreSQL": [], "PostgreSQL -> SQLite": [] };
let rows = 0;
try {
  for (let round = 1; round <= rounds; round++) {
    const url = await cluster.createDatabase();
    const toPg = copy(database, url);
    const back = copy(url, join(folder, `back-${round}.db`));
    rows = toPg.rows;
    if (back.rows !== rows) throw new Error(`copied ${toPg.rows} rows there and ${back.rows} back`);
    results["SQLite -> PostgreSQL"]?.push(toPg.seconds);
    results["PostgreSQL -> SQLite"]?.push(back.seconds);
  }
} finally {
  cluster.stop();
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
console.log(`${deviceCount.toLocaleString("en-US")} devices, ${rows.toLocaleString("en-US")} rows in all`);
console.log("| direction | median s (rows/s) | rounds, s |\n|---|---|---|");
for (const [direction, seconds] of Object.entries(results))
  console.log(
    `| ${direction} | ${median(seconds).toFixed(2)} (${Math.round(rows / median(seconds)).toLocaleString("en-US")}) | ${seconds.map((value) => value.toFixed(2)).join(", ")} |`,
  );
rmSync(folder, { recursive: true, force: true });
