/**
 * `npm run bench`: Bulwark's speed as ratios to the stack's own limits, measured in one run.
 *
 * The executable is built by the same function as `npm run build`. Three baselines are started by
 * this script: a raw Bun.serve answering a small JSON object; a raw Bun.serve + bun:sqlite upserting one
 * row per request at the same `synchronous`; and the floor of P1 and P6 (bench/baseline-floor.ts), the
 * least work of an authenticated device read and of a refused sign-in, written bare. Servers run on core 0 and wrk on core 1 (taskset); each
 * Bulwark measure is alternated with its baseline and the medians are kept. Datasets of 100k and 1M
 * devices are SQL copies of a device enrolled through the API (scripts/bench/seed-devices.ts).
 *
 * `--store postgresql` measures the PostgreSQL store instead (P8, P9, P3 on PostgreSQL, deep pages right
 * after a start and after a restart, and memory on both stores): the SQLite database seeded as above is moved into a new
 * PostgreSQL database at each size with `bulwark db copy`, on a durable throwaway cluster whose processes
 * run on the server core (test/helpers/pg-cluster.ts, `durable`), or on `--pg-url` (a role that may
 * create databases). Its baseline for check-ins is a raw Bun.serve + Bun.sql upserting one row per request
 * on the same PostgreSQL (bench/baseline-upsert-pg.ts).
 *
 * `--store replicas` measures P10: two replicas on one PostgreSQL database behind HAProxy with
 * deploy/haproxy-replicas.cfg, against one replica behind the same HAProxy, alternated: device reads and
 * check-ins, the CPU each process spends per request (the replicas, PostgreSQL, HAProxy: where the time
 * goes), webhook delivery latency through both, and how long the jobs take to move when their leader is
 * killed. Every process but wrk shares the server core: this shows what coordinating replicas costs,
 * not what they scale to.
 *
 * Usage: npm run bench [-- --seconds 5 --rounds 3 --sizes 100000,1000000 --store sqlite|postgresql|replicas
 * --pg-url postgres://USER@HOST/DATABASE]
 * Results depend on the machine; they are printed, never asserted.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { freePort, startPgCluster } from "../test/helpers/pg-cluster";
import { type RunningProxy, startHaproxy } from "../test/helpers/replicas";
import { floorToken } from "./bench/baseline-floor";
import {
  alternate,
  call,
  median,
  medianResult,
  pinToLoadCore,
  type RunningServer,
  SERVER_CORE,
  startServer,
  type WrkResult,
  wrk,
} from "./bench/processes";
import { BENCH_TOKEN_PREFIX, benchDeviceId, seedDevices } from "./bench/seed-devices";
import { buildExecutable } from "./build-executable";

const option = (name: string, fallback: string) => {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? (process.argv[index + 1] ?? fallback) : fallback;
};
const seconds = Number(option("seconds", "5"));
const rounds = Number(option("rounds", "3"));
const sizes = option("sizes", "100000,1000000").split(",").map(Number);
const store = option("store", "sqlite");
if (store !== "sqlite" && store !== "postgresql" && store !== "replicas") {
  console.error(`--store ${store}: sqlite, postgresql or replicas`);
  process.exit(1);
}
const pgUrl = option("pg-url", "");
const CONNECTIONS = 64;
/** Devices 1 to CHECKIN_TOKENS - 1 check in; on PostgreSQL, 20,000 of them (the memory measure's load). */
const CHECKIN_TOKENS = store === "sqlite" ? 10_000 : 20_001;
if (sizes.some((size) => !(size >= CHECKIN_TOKENS))) {
  console.error(
    `--sizes: each must be at least ${CHECKIN_TOKENS.toLocaleString("en")}, the devices that check in`,
  );
  process.exit(1);
}
/** Pages read by one client right after a start, spread evenly over the fleet. */
const COLD_PAGES = 200;
/** The raw upsert's pool on PostgreSQL: a connection per request in flight, as many as wrk's. */
const RAW_UPSERT_POOL = CONNECTIONS;
/** What every bench agent reports: the same state each time, as a steady fleet does. */
const CHECKIN_BODY = {
  agent_version: "1.0.0",
  os_version: "14.4",
  facts: { disk_encrypted: true, firewall_enabled: true, screen_lock_enabled: true, vpn_connected: true },
};
const PAGE_SIZE = 50;
const OFFLINE_BURST = 600_000;

for (const tool of ["wrk", "taskset"]) {
  if (!Bun.which(tool)) {
    console.error(`${tool} is not installed (apt-get install ${tool === "wrk" ? "wrk" : "util-linux"})`);
    process.exit(1);
  }
}

pinToLoadCore();
const folder = mkdtempSync(join(tmpdir(), "bulwark-bench-"));
const binary = join(folder, "bulwark");
await buildExecutable(binary);
const bun = process.execPath;
const here = import.meta.dir;
const dataFolder = join(folder, "service");
mkdirSync(dataFolder);

const BULWARK_PORT = 18_080;
const ADMIN = { email: "bench@example.com", password: "bench-password-123" };
function bulwarkEnv(extra: Record<string, string> = {}): Record<string, string> {
  return {
    // A fixed port: access tokens name their issuer's address, so one signed in before a restart works after it.
    BULWARK_SERVER_PORT: String(BULWARK_PORT),
    BULWARK_DATABASE_PATH: join(dataFolder, "bulwark.db"),
    BULWARK_ADMIN_EMAIL: ADMIN.email,
    BULWARK_ADMIN_PASSWORD: ADMIN.password,
    BULWARK_RATE_LIMIT_AUTHENTICATED_PER_MINUTE: "100000000",
    BULWARK_RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: "100000000",
    BULWARK_RATE_LIMIT_ENTERPRISE_PER_MINUTE: "100000000",
    // The throttled pair stays locked for the whole run (P6 measures refusals of a locked pair).
    BULWARK_AUTH_LOGIN_LOCKOUT_SECONDS: "86400",
    // 1M devices need more tunnel addresses than the default /16, and their one organization all of them.
    BULWARK_VPN_ADDRESS_POOL: "10.0.0.0/8",
    BULWARK_VPN_ORGANIZATION_PREFIX_LENGTH: "8",
    // For the check-ins committed together (the batch size histogram); serving /metrics costs nothing else.
    BULWARK_METRICS_ENABLED: "true",
    ...extra,
  };
}
const startBulwark = (extra: Record<string, string> = {}) =>
  startServer([binary, "serve"], { cwd: dataFolder, env: bulwarkEnv(extra) });

// --- The service's first start: a user session, an API key and one device enrolled through the API. ---
let bulwark = await startBulwark();
const login = await call(bulwark, "POST", "/api/v1/auth/login", ADMIN);
const accessToken: string = login.body.token;
// The floor baseline (bench/baseline-floor.ts) reads the same session, with a token of its own kind.
const floorKey = randomBytes(32);
const sessionId: string = JSON.parse(
  Buffer.from(accessToken.split(".")[1] ?? "", "base64url").toString(),
).sid;
const floorAuth = [`authorization: Bearer ${floorToken(floorKey, sessionId)}`];
const apiKey: string = (
  await call(
    bulwark,
    "POST",
    "/api/v1/auth/api-keys",
    { name: "bench", scopes: ["devices:read"] },
    accessToken,
  )
).body.key;
const enrollmentToken: string = (
  await call(bulwark, "POST", "/api/v1/enrollment-tokens", { max_uses: null }, accessToken)
).body.token;
const template = await call(bulwark, "POST", "/api/v1/devices/enroll", {
  enrollment_token: enrollmentToken,
  device_name: "bench-template",
  platform: "macos",
  agent_version: "1.0.0",
  hardware_id: "bench-template",
});
const templateId: string = template.body.device_id ?? template.body.id;
// Throttled sign-in: this address and email are locked out by failed attempts.
const throttled = { email: "throttled@example.com", password: "wrong-password-123" };
const signInThrottled = (server: { url: string }) =>
  fetch(`${server.url}/api/v1/auth/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(throttled),
  });
for (let attempt = 0; attempt < 6; attempt++) await signInThrottled(bulwark);
await bulwark.stop();

// --- wrk scripts ---
const checkinScript = join(folder, "checkin.lua");
writeFileSync(
  checkinScript,
  `local body = '${JSON.stringify(CHECKIN_BODY)}'
request = function()
  local token = "${BENCH_TOKEN_PREFIX}" .. math.random(1, ${CHECKIN_TOKENS - 1})
  return wrk.format("POST", "/api/v1/agent/checkin", { ["content-type"] = "application/json", ["authorization"] = "Bearer " .. token }, body)
end
`,
);
const upsertScript = join(folder, "upsert.lua");
writeFileSync(
  upsertScript,
  `local body = '${JSON.stringify(CHECKIN_BODY)}'
request = function()
  return wrk.format("POST", "/", { ["content-type"] = "application/json", ["authorization"] = "Bearer ${BENCH_TOKEN_PREFIX}" .. math.random(1, ${CHECKIN_TOKENS - 1}) }, body)
end
`,
);
const loginScript = join(folder, "login.lua");
writeFileSync(
  loginScript,
  `wrk.method = "POST"\nwrk.headers["content-type"] = "application/json"\nwrk.body = '${JSON.stringify(throttled)}'\n`,
);
const deepPagesScript = (devices: number) => {
  const path = join(folder, `deep-${devices}.lua`);
  writeFileSync(
    path,
    `request = function()\n  return wrk.format("GET", "/api/v1/devices?page_size=${PAGE_SIZE}&page=" .. math.random(1, ${Math.ceil(devices / PAGE_SIZE)}))\nend\n`,
  );
  return path;
};

const jwt = [`authorization: Bearer ${accessToken}`];
const rows: { measure: string; bulwark: string; baseline: string; ratio: string; goal: string }[] = [];
const report = (measure: string, bulwarkValue: string, baseline: string, ratio: string, goal = "") => {
  rows.push({ measure, bulwark: bulwarkValue, baseline, ratio, goal });
  console.log(
    `${measure.padEnd(58)} ${bulwarkValue.padStart(14)} ${baseline.padStart(22)} ${ratio.padStart(7)} ${goal}`,
  );
};
/** Marks a measure whose answers were not all 2xx: its speed would be that of an error. */
const checked = (result: WrkResult) =>
  result.non2xx + result.errors > 0 ? ` (${result.non2xx} non-2xx, ${result.errors} socket errors!)` : "";
const perSecond = (value: number) => `${Math.round(value).toLocaleString("en")}/s`;
const ms = (value: number) => `${value < 10 ? value.toFixed(1) : Math.round(value)} ms`;

let haveDevicesReported = false;
/** Each bench device's first check-in, CONNECTIONS at a time; returns how many were not answered 200. */
async function firstReports(url: string): Promise<number> {
  let next = 1;
  let failed = 0;
  const body = JSON.stringify(CHECKIN_BODY);
  const worker = async () => {
    while (next < CHECKIN_TOKENS) {
      const token = `${BENCH_TOKEN_PREFIX}${next++}`;
      const response = await fetch(`${url}/api/v1/agent/checkin`, {
        method: "POST",
        headers: { "content-type": "application/json", authorization: `Bearer ${token}` },
        body,
      });
      await response.arrayBuffer();
      if (response.status !== 200) failed++;
    }
  };
  await Promise.all(Array.from({ length: CONNECTIONS }, worker));
  return failed;
}

/** The check-in batch size histogram's sum and count, from the server's metrics. */
async function checkInBatches(url: string): Promise<{ sum: number; count: number }> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const value = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, "m").exec(text)?.[1] ?? Number.NaN);
  return { sum: value("bulwark_checkin_batch_size_sum"), count: value("bulwark_checkin_batch_size_count") };
}

/** Check-ins from many devices, alternated with the raw upsert server at the same `synchronous`. */
const checkInsAgainst = (raw: RunningServer) =>
  alternate(
    rounds,
    () =>
      wrk(`${bulwark.url}/api/v1/agent/checkin`, {
        connections: CONNECTIONS,
        seconds,
        script: checkinScript,
      }),
    () => wrk(raw.url, { connections: CONNECTIONS, seconds, script: upsertScript }),
  );

/** Spawn to the first authenticated 200 of GET /devices/:id (API key), on a fixed port. */
async function coldStart(command: string[], env: Record<string, string>, path: string, token?: string) {
  // A port nobody listens on (a random one once met another program's server).
  const port = await freePort();
  const started = performance.now();
  const child = Bun.spawn(["taskset", "-c", "0", ...command], {
    cwd: dataFolder,
    env: { PATH: process.env.PATH ?? "", ...env, BULWARK_SERVER_PORT: String(port), PORT: String(port) },
    stdout: "ignore",
    stderr: "inherit",
  });
  let elapsed = Number.NaN;
  for (;;) {
    try {
      const response = await fetch(`http://127.0.0.1:${port}${path}`, {
        headers: token ? { authorization: `Bearer ${token}` } : {},
      });
      if (response.status === 200) {
        elapsed = performance.now() - started;
        break;
      }
      throw new Error(`cold start answered ${response.status}`);
    } catch (error) {
      // Not listening yet (refused, or a half-open socket while it starts).
      if (performance.now() - started > 30_000)
        throw new Error(`the server did not answer within 30 s: ${error}`);
    }
  }
  child.kill("SIGTERM");
  await child.exited;
  return elapsed;
}

let seeded = 1;
/** Grows the SQLite database to `size` devices (the server stopped); returns the seconds it took. */
function seedTo(size: number): number {
  const started = performance.now();
  seedDevices({
    path: join(dataFolder, "bulwark.db"),
    templateDeviceId: templateId,
    from: seeded,
    to: size,
    tokenCount: CHECKIN_TOKENS,
  });
  seeded = size;
  return (performance.now() - started) / 1000;
}
const sizeLabel = (size: number) => (size >= 1_000_000 ? `${size / 1_000_000}M` : `${size / 1000}k`);

/** P3: each list's p99 with one client, after a warm-up run; `label` names the size (and the store). */
async function measureLists(server: RunningServer, size: number, label: string) {
  const lists = {
    "page 1": { url: `${server.url}/api/v1/devices?page_size=${PAGE_SIZE}` },
    "deep pages": { url: `${server.url}/api/v1/devices`, script: deepPagesScript(size) },
    filtered: { url: `${server.url}/api/v1/devices?status=offline&platform=windows&page_size=${PAGE_SIZE}` },
  };
  const p99: Record<string, number> = {};
  for (const [name, target] of Object.entries(lists)) {
    const load = (runSeconds: number) =>
      wrk(target.url, {
        connections: 1,
        seconds: runSeconds,
        script: "script" in target ? target.script : undefined,
        headers: jwt,
      });
    // A warm-up run first, not counted: a server just started has read none of a 2 GB database yet, and
    // finds its deep-page anchors on the first requests that need them.
    await load(Math.min(seconds, 2));
    const runs = [];
    for (let round = 0; round < rounds; round++) runs.push(await load(seconds));
    const result = medianResult(runs);
    p99[name] = result.p99Ms;
    report(
      `P3 list ${name}, p99, one client (${label})`,
      `${ms(result.p99Ms)}${checked(result)}`,
      `p50 ${ms(result.p50Ms)}`,
      "",
      "< 50 ms",
    );
  }
  return p99;
}

/** Prints each list's p99 at the largest size over the smallest's, the goal being at most 2. */
function reportGrowth(measure: string, values: Record<number, number>): void {
  const [small, large] = [sizes[0], sizes[sizes.length - 1]];
  if (small === undefined || large === undefined || small === large) return;
  if (values[small] === undefined || values[large] === undefined) return;
  report(
    `${measure}: p99 at ${large.toLocaleString("en")} / at ${small.toLocaleString("en")}`,
    ms(values[large]),
    ms(values[small]),
    (values[large] / values[small]).toFixed(2),
    "<= 2",
  );
}

/** The SQLite store: P1 to P7, at each size, then the mass offline. */
async function benchSqlite(): Promise<void> {
  // --- Baselines, on the server core beside Bulwark (only one is under load at a time). ---
  const rawJson = await startServer([bun, join(here, "bench/baseline-json.ts")]);
  const rawUpsert = {
    full: await startServer([
      bun,
      join(here, "bench/baseline-upsert.ts"),
      join(folder, "raw-full.db"),
      "full",
    ]),
    normal: await startServer([
      bun,
      join(here, "bench/baseline-upsert.ts"),
      join(folder, "raw-normal.db"),
      "normal",
    ]),
  };

  const listP99: Record<string, Record<number, number>> = { "page 1": {}, "deep pages": {}, filtered: {} };
  for (const size of sizes) {
    const seedSeconds = seedTo(size);
    console.log(`\n-- ${size.toLocaleString("en")} devices (seeded in ${seedSeconds.toFixed(1)} s)`);
    const label = sizeLabel(size);

    const starts: number[] = [];
    const rawStarts: number[] = [];
    for (let round = 0; round < 5; round++) {
      starts.push(await coldStart([binary, "serve"], bulwarkEnv(), `/api/v1/devices/${templateId}`, apiKey));
      rawStarts.push(await coldStart([bun, join(here, "bench/baseline-json.ts")], {}, "/"));
    }
    report(
      `P5 cold start to first authenticated 200 (${label})`,
      ms(median(starts)),
      `raw Bun.serve ${ms(median(rawStarts))}`,
      (median(starts) / median(rawStarts)).toFixed(1),
      "<= 100 ms",
    );

    // Started after seeding, on the same database: it reads the seeded devices.
    const floor = await startServer([
      bun,
      join(here, "bench/baseline-floor.ts"),
      join(dataFolder, "bulwark.db"),
      floorKey.toString("hex"),
    ]);
    bulwark = await startBulwark();
    const device = await alternate(
      rounds,
      () =>
        wrk(`${bulwark.url}/api/v1/devices/${benchDeviceId(size - 1)}`, {
          connections: CONNECTIONS,
          seconds,
          headers: jwt,
        }),
      () => wrk(rawJson.url, { connections: CONNECTIONS, seconds }),
      () =>
        wrk(`${floor.url}/api/v1/devices/${benchDeviceId(size - 1)}`, {
          connections: CONNECTIONS,
          seconds,
          headers: floorAuth,
        }),
    );
    report(
      `P1 GET /devices/:id, JWT, ${CONNECTIONS} connections (${label})`,
      `${perSecond(device.a.rps)}${checked(device.a)}`,
      `raw JSON ${perSecond(device.b.rps)}`,
      (device.a.rps / device.b.rps).toFixed(3),
      ">= 0.5",
    );
    const deviceFloor = device.c as WrkResult;
    report(
      `P1 the same against its floor (${label})`,
      perSecond(device.a.rps),
      `floor ${perSecond(deviceFloor.rps)}${checked(deviceFloor)}`,
      (device.a.rps / deviceFloor.rps).toFixed(2),
      "",
    );
    const healthRuns = [];
    for (let round = 0; round < rounds; round++)
      healthRuns.push(await wrk(`${bulwark.url}/api/v1/health`, { connections: CONNECTIONS, seconds }));
    const health = medianResult(healthRuns);
    report(
      `GET /health (${label})`,
      `${perSecond(health.rps)}${checked(health)}`,
      `raw JSON ${perSecond(device.b.rps)}`,
      (health.rps / device.b.rps).toFixed(2),
    );

    if (!haveDevicesReported) {
      // The seeded devices have never checked in: each first report stores the whole row and a log
      // entry. Sent once, before the measure, so that P2 is a fleet's steady state at every size, and
      // printed on its own line.
      const started = performance.now();
      const failed = await firstReports(bulwark.url);
      const seconds = (performance.now() - started) / 1000;
      report(
        `check-ins, first report of ${(CHECKIN_TOKENS - 1).toLocaleString("en")} devices (${label})`,
        `${perSecond((CHECKIN_TOKENS - 1) / seconds)}${failed > 0 ? ` (${failed} not 200!)` : ""}`,
        "",
        "",
      );
      haveDevicesReported = true;
    }
    const batchesBefore = await checkInBatches(bulwark.url);
    const checkins = await checkInsAgainst(rawUpsert.full);
    const batchesAfter = await checkInBatches(bulwark.url);
    report(
      `P2 check-ins, synchronous=full, ${CONNECTIONS} connections (${label})`,
      `${perSecond(checkins.a.rps)}${checked(checkins.a)}`,
      `raw upsert ${perSecond(checkins.b.rps)}`,
      (checkins.a.rps / checkins.b.rps).toFixed(2),
      ">= 1.5",
    );
    report(
      `P2 check-ins per commit, mean (${label})`,
      (
        (batchesAfter.sum - batchesBefore.sum) /
        Math.max(1, batchesAfter.count - batchesBefore.count)
      ).toFixed(1),
      "",
      "",
    );

    for (const [name, p99] of Object.entries(await measureLists(bulwark, size, label)))
      (listP99[name] as Record<number, number>)[size] = p99;

    // Both must refuse with the lockout's 429, or P6 would measure another answer.
    for (const server of [bulwark, floor]) {
      const refusal = await signInThrottled(server);
      const reason = ((await refusal.json()) as { reason?: string }).reason;
      if (refusal.status !== 429 || reason !== "login_throttled")
        throw new Error(`P6: ${server.url} answered ${refusal.status} ${reason}, not 429 login_throttled`);
    }
    const signIns = await alternate(
      rounds,
      () =>
        wrk(`${bulwark.url}/api/v1/auth/login`, { connections: CONNECTIONS, seconds, script: loginScript }),
      () => wrk(rawJson.url, { connections: CONNECTIONS, seconds }),
      () => wrk(`${floor.url}/api/v1/auth/login`, { connections: CONNECTIONS, seconds, script: loginScript }),
    );
    report(
      `P6 refused (throttled) sign-in (${label})`,
      perSecond(signIns.a.rps),
      `raw JSON ${perSecond(signIns.b.rps)}`,
      (signIns.a.rps / signIns.b.rps).toFixed(2),
      ">= 0.5",
    );
    report(
      `P6 the same against its floor (${label})`,
      perSecond(signIns.a.rps),
      `floor ${perSecond((signIns.c as WrkResult).rps)}`,
      (signIns.a.rps / (signIns.c as WrkResult).rps).toFixed(2),
      "",
    );
    await floor.stop();
    const memory = bulwark.memory();
    report(
      `P4 resident memory after check-ins and lists (${label})`,
      `${memory.rssMib} MiB`,
      `peak ${memory.peakMib} MiB`,
      "",
      "<= 128 MiB",
    );
    await bulwark.stop();

    bulwark = await startBulwark({ BULWARK_DATABASE_SYNCHRONOUS: "normal" });
    const normal = await checkInsAgainst(rawUpsert.normal);
    report(
      `P2 check-ins, synchronous=normal (${label})`,
      `${perSecond(normal.a.rps)}${checked(normal.a)}`,
      `raw upsert ${perSecond(normal.b.rps)}`,
      (normal.a.rps / normal.b.rps).toFixed(2),
    );
    await bulwark.stop();
  }

  for (const [name, values] of Object.entries(listP99)) reportGrowth(`P3 list ${name}`, values);

  // --- P7: many devices go offline at once while the API is in use. ---
  const largest = sizes[sizes.length - 1] as number;
  const burst = Math.min(OFFLINE_BURST, Math.floor(largest * 0.6));
  let expectedOnline = 0;
  {
    const { Database } = await import("bun:sqlite");
    const db = new Database(join(dataFolder, "bulwark.db"));
    const stale = new Date(Date.now() - 2 * 86_400_000).toISOString();
    db.query(
      "UPDATE devices SET status = 'online', last_seen = ? WHERE rowid IN (SELECT rowid FROM devices WHERE hardware_id LIKE 'bench-hw-%' ORDER BY rowid LIMIT ?)",
    ).run(stale, burst);
    expectedOnline = (
      db.query("SELECT count(*) AS n FROM devices WHERE status = 'online' AND last_seen > ?").get(stale) as {
        n: number;
      }
    ).n;
    db.close();
  }
  bulwark = await startBulwark({ BULWARK_JOBS_SCAN_INTERVAL_SECONDS: "1" });
  const during = [];
  for (let chunk = 0; chunk < 12; chunk++) {
    during.push(
      await wrk(`${bulwark.url}/api/v1/devices/${templateId}`, { connections: 4, seconds, headers: jwt }),
    );
    const summary = (await call(bulwark, "GET", "/api/v1/devices/summary", undefined, accessToken)).body;
    if (summary.by_status.online <= expectedOnline) break;
  }
  const longest = Math.max(...during.map((run) => run.maxMs));
  report(
    `P7 longest reply while ${burst.toLocaleString("en")} devices go offline`,
    ms(longest),
    "",
    "",
    "<= 100 ms",
  );
  await bulwark.stop();
  await Promise.all([rawJson.stop(), rawUpsert.full.stop(), rawUpsert.normal.stop()]);
}

/**
 * GET page after page of the unfiltered list, one at a time: COLD_PAGES pages spread evenly over the
 * fleet, in a fixed shuffled order, on a server that has answered nothing yet. Its p99 and p50.
 */
async function coldDeepPages(server: RunningServer, size: number) {
  const pages = Math.ceil(size / PAGE_SIZE);
  const durations: number[] = [];
  let failed = 0;
  for (let index = 0; index < COLD_PAGES; index++) {
    // 7919 is prime to COLD_PAGES: each spread page once, neighbours far apart in time.
    const step = (index * 7919) % COLD_PAGES;
    const page = 1 + Math.floor((step * (pages - 1)) / (COLD_PAGES - 1));
    const started = performance.now();
    const response = await fetch(`${server.url}/api/v1/devices?page_size=${PAGE_SIZE}&page=${page}`, {
      headers: { authorization: `Bearer ${accessToken}` },
    });
    await response.arrayBuffer();
    durations.push(performance.now() - started);
    if (response.status !== 200) failed++;
  }
  durations.sort((a, b) => a - b);
  const at = (fraction: number) => durations[Math.ceil(fraction * durations.length) - 1] as number;
  return { p99: at(0.99), p50: at(0.5), failed };
}

/** coldDeepPages on a server just started, reported and kept in `p99s` by size. */
async function measureDeepPagesAfter(
  event: "start" | "restart",
  server: RunningServer,
  size: number,
  label: string,
  p99s: Record<number, number> | undefined,
) {
  const pages = await coldDeepPages(server, size);
  if (p99s) p99s[size] = pages.p99;
  report(
    `deep pages right after a ${event}, p99, ${COLD_PAGES} pages, one client (${label})`,
    `${ms(pages.p99)}${pages.failed > 0 ? ` (${pages.failed} not 200!)` : ""}`,
    `p50 ${ms(pages.p50)}`,
    "",
  );
}

/**
 * The PostgreSQL the store modes measure: a durable throwaway cluster whose processes run on the server
 * core, or `--pg-url`; databases made and dropped on it.
 */
async function openBenchPostgres(settingsLines: string[] = []) {
  const cluster = pgUrl
    ? null
    : await startPgCluster({
        durable: true,
        cpus: SERVER_CORE,
        settings: ["max_connections = 200", ...settingsLines],
      });
  const serverUrl = pgUrl || (cluster?.url as string);
  const admin = new SQL(serverUrl, { max: 1 });
  const settings = await admin`SELECT name, setting, unit FROM pg_settings WHERE name IN
    ('server_version', 'fsync', 'synchronous_commit', 'full_page_writes', 'wal_sync_method', 'shared_buffers',
     'max_connections', 'commit_delay')`;
  console.log(
    `PostgreSQL ${cluster ? "(a throwaway cluster on core 0)" : pgUrl.replace(/(\/\/[^:/@]*):[^@/]*@/, "$1:***@")}: ${settings.map((row: { name: string; setting: string; unit: string | null }) => `${row.name}=${row.setting}${row.unit ? ` ${row.unit}` : ""}`).join(", ")}`,
  );
  const databases: string[] = [];
  const newDatabase = async () => {
    const name = `bulwark_bench_${process.pid}_${databases.length + 1}`;
    await admin.unsafe(`CREATE DATABASE ${name}`);
    databases.push(name);
    const url = new URL(serverUrl);
    url.pathname = `/${name}`;
    return url.toString();
  };
  const dropDatabase = async (name: string | undefined) => {
    if (name) await admin.unsafe(`DROP DATABASE IF EXISTS ${name}`);
  };
  return {
    cluster,
    admin,
    databases,
    newDatabase,
    dropDatabase,
    close: async () => {
      for (const name of databases) await dropDatabase(name);
      await admin.close();
      cluster?.stop();
    },
  };
}

/** The first report of every device that checks in, once, on SQLite before the copy (a steady fleet). */
async function reportFirstOnSqlite(label: string): Promise<void> {
  if (haveDevicesReported) return;
  bulwark = await startBulwark();
  const started = performance.now();
  const failed = await firstReports(bulwark.url);
  report(
    `check-ins, first report of ${(CHECKIN_TOKENS - 1).toLocaleString("en")} devices (SQLite, ${label})`,
    `${perSecond((CHECKIN_TOKENS - 1) / ((performance.now() - started) / 1000))}${failed > 0 ? ` (${failed} not 200!)` : ""}`,
    "",
    "",
  );
  await bulwark.stop();
  haveDevicesReported = true;
}

/** The SQLite fleet copied into the new database at `url` with `bulwark db copy`, then vacuumed. */
async function copyFleetTo(url: string, size: number, seedSeconds: number): Promise<void> {
  const sqlitePath = join(dataFolder, "bulwark.db");
  const copyStarted = performance.now();
  const copy = Bun.spawnSync(
    [binary, "db", "copy", "--from", sqlitePath, "--to", url, "--key-file", `${sqlitePath}.key`],
    { env: { PATH: process.env.PATH ?? "" } },
  );
  if (copy.exitCode !== 0) throw new Error(`db copy failed:\n${copy.stderr}${copy.stdout}`);
  const copySeconds = (performance.now() - copyStarted) / 1000;
  // What autovacuum does to a table grown by a million inserts, done at once: the visibility map and
  // the planner's statistics of a database in its steady state.
  const vacuumStarted = performance.now();
  const copied = new SQL(url, { max: 1 });
  await copied.unsafe("VACUUM (ANALYZE)");
  const [{ bytes }] = await copied`SELECT pg_database_size(current_database()) AS bytes`;
  await copied.close();
  console.log(
    `\n-- ${size.toLocaleString("en")} devices (seeded in ${seedSeconds.toFixed(1)} s on SQLite; db copy to PostgreSQL ${copySeconds.toFixed(1)} s; VACUUM (ANALYZE) ${((performance.now() - vacuumStarted) / 1000).toFixed(1)} s; ${Math.round(Number(bytes) / 2 ** 20)} MiB)`,
  );
}

/**
 * The PostgreSQL store beside the SQLite database it was copied from, at each size: deep pages right
 * after a start, P9 (a device read), P3 (lists), P8 (check-ins against a raw upsert on the same
 * PostgreSQL), the memory after lists and check-ins, and deep pages right after a restart, on both stores.
 */
async function benchPostgresql(): Promise<void> {
  const { newDatabase, dropDatabase, databases, close } = await openBenchPostgres();
  const rawUpsert = await startServer([
    bun,
    join(here, "bench/baseline-upsert-pg.ts"),
    await newDatabase(),
    String(RAW_UPSERT_POOL),
  ]);
  const sqlitePath = join(dataFolder, "bulwark.db");
  const keyFile = `${sqlitePath}.key`;
  const coldP99: Record<string, Record<number, number>> = { SQLite: {}, PostgreSQL: {} };
  const restartP99: Record<string, Record<number, number>> = { SQLite: {}, PostgreSQL: {} };
  const listP99: Record<string, Record<number, number>> = { "page 1": {}, "deep pages": {}, filtered: {} };
  let previous: string | undefined;
  for (const size of sizes) {
    const seedSeconds = seedTo(size);
    const label = sizeLabel(size);
    await reportFirstOnSqlite(label);
    await dropDatabase(previous);
    const url = await newDatabase();
    previous = databases[databases.length - 1];
    await copyFleetTo(url, size, seedSeconds);

    const servers: Record<string, RunningServer> = {};
    const environments: Record<string, Record<string, string>> = {
      SQLite: {},
      PostgreSQL: {
        BULWARK_DATABASE_URL: url,
        BULWARK_DATABASE_KEY_FILE: keyFile,
        BULWARK_SERVER_PORT: String(BULWARK_PORT + 1),
        // The issuer of the session's token: the SQLite server's address.
        BULWARK_SERVER_BASE_URL: `http://localhost:${BULWARK_PORT}`,
      },
    };
    for (const [name, extra] of Object.entries(environments)) {
      const server = await startBulwark(extra);
      servers[name] = server;
      await measureDeepPagesAfter("start", server, size, `${name}, ${label}`, coldP99[name]);
    }
    const sqlite = servers.SQLite as RunningServer;
    const postgresql = servers.PostgreSQL as RunningServer;

    const readDevice = (server: RunningServer) => () =>
      wrk(`${server.url}/api/v1/devices/${benchDeviceId(size - 1)}`, {
        connections: CONNECTIONS,
        seconds,
        headers: jwt,
      });
    const reads = await alternate(rounds, readDevice(postgresql), readDevice(sqlite));
    report(
      `P9 GET /devices/:id, JWT, ${CONNECTIONS} connections (PostgreSQL, ${label})`,
      `${perSecond(reads.a.rps)}${checked(reads.a)}`,
      `SQLite ${perSecond(reads.b.rps)}${checked(reads.b)}`,
      (reads.a.rps / reads.b.rps).toFixed(2),
      ">= 0.5",
    );

    for (const [name, p99] of Object.entries(await measureLists(postgresql, size, `PostgreSQL, ${label}`)))
      (listP99[name] as Record<number, number>)[size] = p99;
    await measureLists(sqlite, size, `SQLite, ${label}`);

    const checkIns = (server: RunningServer) => () =>
      wrk(`${server.url}/api/v1/agent/checkin`, { connections: CONNECTIONS, seconds, script: checkinScript });
    const before = { pg: await checkInBatches(postgresql.url), sqlite: await checkInBatches(sqlite.url) };
    const writes = await alternate(
      rounds,
      checkIns(postgresql),
      () => wrk(rawUpsert.url, { connections: CONNECTIONS, seconds, script: upsertScript }),
      checkIns(sqlite),
    );
    const after = { pg: await checkInBatches(postgresql.url), sqlite: await checkInBatches(sqlite.url) };
    const perCommit = (from: { sum: number; count: number }, to: { sum: number; count: number }) =>
      ((to.sum - from.sum) / Math.max(1, to.count - from.count)).toFixed(1);
    report(
      `P8 check-ins, ${(CHECKIN_TOKENS - 1).toLocaleString("en")} devices, ${CONNECTIONS} connections (PostgreSQL, ${label})`,
      `${perSecond(writes.a.rps)}${checked(writes.a)}`,
      `raw upsert, ${RAW_UPSERT_POOL} conn. ${perSecond(writes.b.rps)}${checked(writes.b)}`,
      (writes.a.rps / writes.b.rps).toFixed(2),
      ">= 1.5",
    );
    report(`P8 check-ins per commit, mean (PostgreSQL, ${label})`, perCommit(before.pg, after.pg), "", "");
    const sqliteWrites = writes.c as WrkResult;
    report(
      `check-ins, the same on SQLite, synchronous=full (${label})`,
      `${perSecond(sqliteWrites.rps)}${checked(sqliteWrites)}`,
      `per commit ${perCommit(before.sqlite, after.sqlite)}`,
      "",
    );

    for (const [name, server] of Object.entries(servers)) {
      const memory = server.memory();
      report(
        `resident memory after lists and check-ins (${name}, ${label})`,
        `${memory.rssMib} MiB`,
        `peak ${memory.peakMib} MiB`,
        "",
        "<= 128 MiB",
      );
      await server.stop();
      // Started again on the same database: the anchors the first start found are kept there.
      const again = await startBulwark(environments[name]);
      await measureDeepPagesAfter("restart", again, size, `${name}, ${label}`, restartP99[name]);
      await again.stop();
    }
  }
  for (const [name, values] of Object.entries(coldP99))
    reportGrowth(`deep pages right after a start (${name})`, values);
  for (const [name, values] of Object.entries(restartP99))
    reportGrowth(`deep pages right after a restart (${name})`, values);
  for (const [name, values] of Object.entries(listP99)) reportGrowth(`P3 list ${name} (PostgreSQL)`, values);
  await rawUpsert.stop();
  await close();
}

/** CPU seconds (user and system) a process has used, from /proc; 0 for one that is gone. */
function cpuSeconds(pid: number): number {
  try {
    const fields = readFileSync(`/proc/${pid}/stat`, "utf8").split(") ")[1]?.split(" ") ?? [];
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return 0;
  }
}

/** The PostgreSQL server's processes: the postmaster and its children (backends, writers). */
function postgresPids(postmaster: number): number[] {
  if (postmaster === 0) return [];
  const children = Bun.spawnSync(["pgrep", "-P", String(postmaster)])
    .stdout.toString()
    .trim();
  return [
    postmaster,
    ...children
      .split("\n")
      .filter((line) => line !== "")
      .map(Number),
  ];
}

/**
 * P10: two replicas behind HAProxy against one replica behind the same HAProxy (its one server named
 * twice), alternated, at each size: device reads and check-ins with the CPU each process spent per
 * request; webhook delivery latency through both; the jobs' move when their leader is killed.
 */
async function benchReplicas(): Promise<void> {
  // pg_stat_statements: PostgreSQL's time per statement, for where the time of a check-in goes.
  const pg = await openBenchPostgres(pgUrl ? [] : ["shared_preload_libraries = 'pg_stat_statements'"]);
  // With --pg-url, PostgreSQL's processes are elsewhere: its CPU is not counted.
  const postmaster = pg.cluster?.pid ?? 0;
  const keyFile = `${join(dataFolder, "bulwark.db")}.key`;
  const receiver = startDeliveryReceiver();
  let previous: string | undefined;
  for (const size of sizes) {
    const seedSeconds = seedTo(size);
    const label = sizeLabel(size);
    await reportFirstOnSqlite(label);
    await pg.dropDatabase(previous);
    const url = await pg.newDatabase();
    previous = pg.databases[pg.databases.length - 1];
    await copyFleetTo(url, size, seedSeconds);
    const statements = new SQL(url, { max: 1 });
    const hasStatements = await statements`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`.then(
      () => true,
      () => false,
    );
    /** PostgreSQL's execution time per request of the statements run since the last call, the largest first. */
    const statementTimes = async (requests: number) => {
      if (!hasStatements) return "";
      const rows = await statements`SELECT query, calls, total_exec_time FROM pg_stat_statements
        WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
        ORDER BY total_exec_time DESC LIMIT 6`;
      await statements`SELECT pg_stat_statements_reset()`;
      return rows
        .map(
          (row: { query: string; calls: number; total_exec_time: number }) =>
            `${Math.round((row.total_exec_time * 1000) / requests)} µs ${row.query.replace(/\s+/g, " ").slice(0, 60)} (${Math.round(Number(row.calls) / (requests / 1000))} per 1,000)`,
        )
        .join("; ");
    };
    const replicaEnv = (index: number) => ({
      BULWARK_DATABASE_URL: url,
      BULWARK_DATABASE_KEY_FILE: keyFile,
      BULWARK_SERVER_PORT: String(BULWARK_PORT + index),
      BULWARK_SERVER_REPLICA_NAME: `replica-${index}`,
      // The issuer of the session's token: the SQLite server's address.
      BULWARK_SERVER_BASE_URL: `http://localhost:${BULWARK_PORT}`,
      BULWARK_WEBHOOKS_ALLOW_PRIVATE_TARGETS: "true",
      // The jobs' lease lasts one scan interval: 5 s here, 60 s by default.
      BULWARK_JOBS_SCAN_INTERVAL_SECONDS: "5",
    });
    /** One more run of each, printing PostgreSQL's time per request by statement. */
    const statementsPerRequest = async (what: string, run: (url: string) => Promise<WrkResult>) => {
      for (const [name, proxy] of [
        ["two replicas", two],
        ["one replica", one],
      ] as const) {
        await statementTimes(1);
        const result = await run(proxy.url);
        console.log(
          `  PostgreSQL's time per ${what} by statement, ${name}: ${await statementTimes(result.rps * seconds)}`,
        );
      }
    };
    const replicas = [await startBulwark(replicaEnv(1)), await startBulwark(replicaEnv(2))] as [
      RunningServer,
      RunningServer,
    ];
    const hosts = replicas.map((replica) => new URL(replica.url).host) as [string, string];
    // On the server core, as the replicas and PostgreSQL.
    const onServerCore = ["taskset", "-c", SERVER_CORE];
    const two = await startHaproxy(BULWARK_PORT + 10, hosts, { prefix: onServerCore });
    const one = await startHaproxy(BULWARK_PORT + 11, [hosts[0], hosts[0]], { prefix: onServerCore });
    const cpu: Record<string, { bulwark: number[]; postgres: number[]; haproxy: number[] }> = {};
    /** A wrk run through `proxy`, with the CPU each process spent per request during it. */
    const measured =
      (name: string, proxy: RunningProxy, run: (url: string) => Promise<WrkResult>) => async () => {
        const pids = {
          bulwark: replicas.map((replica) => replica.pid),
          postgres: postgresPids(postmaster),
          haproxy: [proxy.process.pid],
        };
        const sum = (list: number[]) => list.reduce((total, pid) => total + cpuSeconds(pid), 0);
        const before = {
          bulwark: sum(pids.bulwark),
          postgres: sum(pids.postgres),
          haproxy: sum(pids.haproxy),
        };
        const result = await run(proxy.url);
        const requests = Math.max(1, result.rps * seconds);
        const entry = cpu[name] ?? { bulwark: [], postgres: [], haproxy: [] };
        cpu[name] = entry;
        for (const key of ["bulwark", "postgres", "haproxy"] as const)
          entry[key].push(((sum(pids[key]) - before[key]) / requests) * 1e6);
        return result;
      };
    const reportCpu = (name: string) => {
      const entry = cpu[name];
      if (!entry) return;
      report(
        `  CPU per request: Bulwark / PostgreSQL / HAProxy (${name})`,
        `${Math.round(median(entry.bulwark))} µs`,
        `${Math.round(median(entry.postgres))} µs / ${Math.round(median(entry.haproxy))} µs`,
        "",
      );
    };
    const readDevice = (url: string) =>
      wrk(`${url}/api/v1/devices/${benchDeviceId(size - 1)}`, {
        connections: CONNECTIONS,
        seconds,
        headers: jwt,
      });
    const reads = await alternate(
      rounds,
      measured(`reads, two replicas, ${label}`, two, readDevice),
      measured(`reads, one replica, ${label}`, one, readDevice),
    );
    report(
      `P10 GET /devices/:id, two replicas behind HAProxy (${label})`,
      `${perSecond(reads.a.rps)}${checked(reads.a)}`,
      `one replica ${perSecond(reads.b.rps)}${checked(reads.b)}`,
      (reads.a.rps / reads.b.rps).toFixed(2),
    );
    reportCpu(`reads, two replicas, ${label}`);
    reportCpu(`reads, one replica, ${label}`);
    await statementsPerRequest("device read", readDevice);
    /** Transactions both replicas ran again (serialization failures, deadlocks), and their check-in commits. */
    const retriesAndCommits = async () => {
      let retries = 0;
      let commits = 0;
      for (const replica of replicas) {
        const text = await (await fetch(`${replica.url}/metrics`)).text();
        retries += Number(/^bulwark_db_transaction_retries_total (\S+)$/m.exec(text)?.[1] ?? 0);
        commits += Number(/^bulwark_checkin_batch_size_count (\S+)$/m.exec(text)?.[1] ?? 0);
      }
      return { retries, commits };
    };
    const checkIns = (url: string) =>
      wrk(`${url}/api/v1/agent/checkin`, { connections: CONNECTIONS, seconds, script: checkinScript });
    const before = await retriesAndCommits();
    const writes = await alternate(
      rounds,
      measured(`check-ins, two replicas, ${label}`, two, checkIns),
      measured(`check-ins, one replica, ${label}`, one, checkIns),
    );
    const after = await retriesAndCommits();
    report(
      `P10 check-ins, two replicas behind HAProxy (${label})`,
      `${perSecond(writes.a.rps)}${checked(writes.a)}`,
      `one replica ${perSecond(writes.b.rps)}${checked(writes.b)}`,
      (writes.a.rps / writes.b.rps).toFixed(2),
    );
    reportCpu(`check-ins, two replicas, ${label}`);
    reportCpu(`check-ins, one replica, ${label}`);
    await statementsPerRequest("check-in", checkIns);
    report(
      `  transactions run again per 100 check-in commits, both runs (${label})`,
      ((100 * (after.retries - before.retries)) / Math.max(1, after.commits - before.commits)).toFixed(1),
      `${after.commits - before.commits} commits`,
      "",
    );

    // Webhook latency: a rename answered, then its device.updated received, one at a time.
    await call(
      two,
      "POST",
      "/api/v1/webhooks",
      { url: receiver.url, events: ["device.updated"], secret: "bench-webhook-secret-0123456789" },
      accessToken,
    );
    const latencies: number[] = [];
    for (let index = 0; index < 40; index++) {
      const arrived = receiver.next();
      await call(
        two,
        "PATCH",
        `/api/v1/devices/${benchDeviceId(1)}`,
        { device_name: `bench rename ${size} ${index}` },
        accessToken,
      );
      const answeredAt = performance.now();
      latencies.push((await arrived) - answeredAt);
    }
    latencies.sort((x, y) => x - y);
    report(
      `webhook delivery after the change is answered, two replicas (${label})`,
      `p50 ${ms(median(latencies))}`,
      `max ${ms(latencies[latencies.length - 1] ?? 0)}`,
      "",
    );

    // The jobs' leader killed: how long until the other replica runs them.
    const health = await call(replicas[0], "GET", "/api/v1/health");
    const leaderIndex = health.body.job_leader === "replica-1" ? 0 : 1;
    const survivor = replicas[1 - leaderIndex] as RunningServer;
    const killedAt = performance.now();
    await (replicas[leaderIndex] as RunningServer).stop("SIGKILL");
    for (;;) {
      const now = await call(survivor, "GET", "/api/v1/health");
      if (now.body.job_leader === now.body.replica) break;
      await Bun.sleep(20);
    }
    report(
      `jobs taken over after their leader is killed (lease 5 s) (${label})`,
      ms(performance.now() - killedAt),
      "",
      "",
      "<= 2 scan intervals",
    );
    await two.stop();
    await one.stop();
    await survivor.stop();
    await statements.close();
  }
  receiver.stop();
  await pg.close();
}

/** A webhook receiver in this process: `next()` resolves with the time the next delivery arrived. */
function startDeliveryReceiver() {
  let waiting: ((at: number) => void) | null = null;
  const server = Bun.serve({
    port: 0,
    hostname: "127.0.0.1",
    fetch: async (request) => {
      await request.text();
      const at = performance.now();
      waiting?.(at);
      waiting = null;
      return new Response("ok");
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}/hooks`,
    next: () =>
      new Promise<number>((resolve) => {
        waiting = resolve;
      }),
    stop: () => server.stop(true),
  };
}

console.log(
  `Bulwark benchmark, ${new Date().toISOString().slice(0, 10)}: servers on core 0, wrk on core 1, ${rounds} alternated rounds of ${seconds} s, medians\n`,
);
console.log(
  `${"measure".padEnd(58)} ${"Bulwark".padStart(14)} ${"baseline, same run".padStart(22)} ${"ratio".padStart(7)} goal`,
);

await (store === "replicas" ? benchReplicas() : store === "postgresql" ? benchPostgresql() : benchSqlite());

console.log("\n| measure | Bulwark | baseline, same run | ratio | goal |\n|---|---|---|---|---|");
for (const row of rows)
  console.log(`| ${row.measure} | ${row.bulwark} | ${row.baseline} | ${row.ratio} | ${row.goal} |`);
