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
 * Usage: npm run bench [-- --seconds 5 --rounds 3 --sizes 100000,1000000]
 * Results depend on the machine; they are printed, never asserted.
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { floorToken } from "./bench/baseline-floor";
import {
  alternate,
  call,
  median,
  medianResult,
  pinToLoadCore,
  type RunningServer,
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
const CONNECTIONS = 64;
const CHECKIN_TOKENS = 10_000;
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

// --- Baselines, on the server core beside Bulwark (only one is under load at a time). ---
const rawJson = await startServer([bun, join(here, "bench/baseline-json.ts")]);
const rawUpsert = {
  full: await startServer([bun, join(here, "bench/baseline-upsert.ts"), join(folder, "raw-full.db"), "full"]),
  normal: await startServer([
    bun,
    join(here, "bench/baseline-upsert.ts"),
    join(folder, "raw-normal.db"),
    "normal",
  ]),
};

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
  const port = 20_000 + Math.floor(Math.random() * 20_000);
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

console.log(
  `Bulwark benchmark, ${new Date().toISOString().slice(0, 10)}: servers on core 0, wrk on core 1, ${rounds} alternated rounds of ${seconds} s, medians\n`,
);
console.log(
  `${"measure".padEnd(58)} ${"Bulwark".padStart(14)} ${"baseline, same run".padStart(22)} ${"ratio".padStart(7)} goal`,
);

const listP99: Record<string, Record<number, number>> = { "page 1": {}, "deep pages": {}, filtered: {} };
let seeded = 1;
for (const size of sizes) {
  const seedStarted = performance.now();
  seedDevices({
    path: join(dataFolder, "bulwark.db"),
    templateDeviceId: templateId,
    from: seeded,
    to: size,
    tokenCount: CHECKIN_TOKENS,
  });
  seeded = size;
  console.log(
    `\n-- ${size.toLocaleString("en")} devices (seeded in ${((performance.now() - seedStarted) / 1000).toFixed(1)} s)`,
  );
  const label = size >= 1_000_000 ? `${size / 1_000_000}M` : `${size / 1000}k`;

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
    ((batchesAfter.sum - batchesBefore.sum) / Math.max(1, batchesAfter.count - batchesBefore.count)).toFixed(
      1,
    ),
    "",
    "",
  );

  const lists = {
    "page 1": { url: `${bulwark.url}/api/v1/devices?page_size=${PAGE_SIZE}` },
    "deep pages": { url: `${bulwark.url}/api/v1/devices`, script: deepPagesScript(size) },
    filtered: { url: `${bulwark.url}/api/v1/devices?status=offline&platform=windows&page_size=${PAGE_SIZE}` },
  };
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
    (listP99[name] as Record<number, number>)[size] = result.p99Ms;
    report(
      `P3 list ${name}, p99, one client (${label})`,
      `${ms(result.p99Ms)}${checked(result)}`,
      `p50 ${ms(result.p50Ms)}`,
      "",
      "< 50 ms",
    );
  }

  // Both must refuse with the lockout's 429, or P6 would measure another answer.
  for (const server of [bulwark, floor]) {
    const refusal = await signInThrottled(server);
    const reason = ((await refusal.json()) as { reason?: string }).reason;
    if (refusal.status !== 429 || reason !== "login_throttled")
      throw new Error(`P6: ${server.url} answered ${refusal.status} ${reason}, not 429 login_throttled`);
  }
  const signIns = await alternate(
    rounds,
    () => wrk(`${bulwark.url}/api/v1/auth/login`, { connections: CONNECTIONS, seconds, script: loginScript }),
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

for (const name of Object.keys(listP99)) {
  const [small, large] = sizes;
  const values = listP99[name] as Record<number, number>;
  if (
    small === undefined ||
    large === undefined ||
    values[small] === undefined ||
    values[large] === undefined
  )
    continue;
  report(
    `P3 list ${name}: p99 at ${large.toLocaleString("en")} / at ${small.toLocaleString("en")}`,
    ms(values[large]),
    ms(values[small]),
    (values[large] / values[small]).toFixed(2),
    "<= 2",
  );
}

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

console.log("\n| measure | Bulwark | baseline, same run | ratio | goal |\n|---|---|---|---|---|");
for (const row of rows)
  console.log(`| ${row.measure} | ${row.bulwark} | ${row.baseline} | ${row.ratio} | ${row.goal} |`);
