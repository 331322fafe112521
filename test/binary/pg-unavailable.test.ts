/**
 * The executable on PostgreSQL while PostgreSQL goes away and comes back (docs/postgresql.md, "When
 * PostgreSQL is unavailable"): requests are answered 503 `database_unavailable` with the error body,
 * health says the database is unreachable, the process keeps running (its jobs and webhook dispatcher
 * meet the same database), and once PostgreSQL is back the same server serves again without a restart.
 * A statement that waits longer than database.timeout_seconds (here for a lock) ends with the same 503.
 */
import { afterAll, beforeAll, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { SQL } from "bun";
import { buildBinary, type RunningServer, startServer } from "../helpers/binary";
import { type PgCluster, startPgCluster } from "../helpers/pg-cluster";
import { expectServerErrors } from "../helpers/server-errors";
import { startTcpRelay, type TcpRelay } from "../helpers/tcp-relay";

const ADMIN = { email: "pg-down@example.com", password: "pg-down-password-1" };
const TIMEOUT_SECONDS = 2;

let binary: string;
let cluster: PgCluster;
let databaseUrl: string;
let server: RunningServer;
const folder = mkdtempSync(join(tmpdir(), "bulwark-pg-down-"));

/** The executable serving from `cwd` on the database at `url` (one key file for every server on it). */
function startOn(url: string, cwd: string, env: Record<string, string> = {}): Promise<RunningServer> {
  return startServer(binary, cwd, {
    ...env,
    BULWARK_DATABASE_URL: url,
    BULWARK_DATABASE_KEY_FILE: join(folder, "bulwark.key"),
    BULWARK_DATABASE_TIMEOUT_SECONDS: String(TIMEOUT_SECONDS),
    BULWARK_ADMIN_EMAIL: ADMIN.email,
    BULWARK_ADMIN_PASSWORD: ADMIN.password,
    BULWARK_LOG_FORMAT: "json",
  });
}

beforeAll(async () => {
  // A cluster of its own: this file stops it.
  const [built, started] = await Promise.all([buildBinary(), startPgCluster()]);
  binary = built;
  cluster = started;
  databaseUrl = await cluster.createDatabase();
  // Its jobs run every second, so that some run while PostgreSQL is stopped.
  server = await startOn(databaseUrl, folder, { BULWARK_JOBS_SCAN_INTERVAL_SECONDS: "1" });
}, 120_000);

afterAll(async () => {
  await server?.stop("SIGKILL");
  cluster?.stop();
  rmSync(folder, { recursive: true, force: true });
});

interface Answer {
  status: number;
  body: { [field: string]: unknown; token?: string; details?: string; database?: string } | null;
  requestId: string | null;
}

/** One request to the server; a request that hangs fails here, well after timeout_seconds. */
async function send(
  method: string,
  path: string,
  token?: string,
  body?: unknown,
  to: RunningServer = server,
): Promise<Answer> {
  const response = await fetch(`${to.url}${path}`, {
    method,
    headers: {
      ...(body === undefined ? {} : { "content-type": "application/json" }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout((TIMEOUT_SECONDS + 10) * 1000),
  });
  const text = await response.text();
  return {
    status: response.status,
    body: text ? JSON.parse(text) : null,
    requestId: response.headers.get("x-request-id"),
  };
}

/** The error body of a 503 database_unavailable, with the answer's request id. */
function expectDatabaseUnavailable(answer: Answer): void {
  expect({ status: answer.status, reason: answer.body?.reason }).toEqual({
    status: 503,
    reason: "database_unavailable",
  });
  expect(answer.body).toEqual({
    code: 503,
    reason: "database_unavailable",
    message: expect.any(String),
    ...(answer.body?.details === undefined ? {} : { details: expect.any(String) }),
    request_id: answer.requestId,
  });
}

/** A sign-in, a read, a write and the signed-in user's profile: each needs the database. */
function everydayRequests(token: string, to: RunningServer = server) {
  return {
    signIn: () => send("POST", "/api/v1/auth/login", undefined, ADMIN, to),
    list: () => send("GET", "/api/v1/policies?page_size=100", token, undefined, to),
    create: (name = `Policy ${crypto.randomUUID()}`) => send("POST", "/api/v1/policies", token, { name }, to),
    profile: () => send("GET", "/api/v1/users/me", token, undefined, to),
  };
}

async function waitForLog(pattern: RegExp, seconds: number): Promise<boolean> {
  const deadline = Date.now() + seconds * 1000;
  while (!pattern.test(server.output()) && Date.now() < deadline) await Bun.sleep(50);
  return pattern.test(server.output());
}

test("while PostgreSQL is stopped requests answer 503 database_unavailable and health 503; once it is back the same process serves again", async () => {
  const signedIn = await send("POST", "/api/v1/auth/login", undefined, ADMIN);
  expect(signedIn.status).toBe(200);
  const requests = everydayRequests(signedIn.body?.token ?? "");
  expect((await requests.list()).status).toBe(200);

  expectServerErrors(503);
  await cluster.shutDown("fast");
  expectDatabaseUnavailable(await requests.signIn());
  expectDatabaseUnavailable(await requests.list());
  expectDatabaseUnavailable(await requests.create());
  expectDatabaseUnavailable(await requests.profile());
  const health = await send("GET", "/api/v1/health");
  expect({ status: health.status, database: health.body?.database }).toEqual({
    status: 503,
    database: "unreachable",
  });
  // The jobs' lease and the dispatcher's polls meet the stopped database too: they fail, are logged
  // (each once, however often they try), and the process goes on. No job runs meanwhile: a server that
  // cannot renew the jobs' lease stops running them (another replica may hold it by now).
  expect(await waitForLog(/job lease could not be taken or renewed/, 10)).toBe(true);
  expect(server.output().match(/job lease could not be taken or renewed/g)).toHaveLength(1);
  const leasesTaken = () => server.output().match(/took the job lease/g)?.length ?? 0;
  const takenBeforeTheRestart = leasesTaken();
  expect(await waitForLog(/webhook dispatcher: polling failed/, 10)).toBe(true);
  expect(server.output().match(/webhook dispatcher: polling failed/g)).toHaveLength(1);
  expect(server.process.exitCode).toBeNull();

  await cluster.startAgain();
  expect((await requests.signIn()).status).toBe(200);
  expect((await requests.list()).status).toBe(200);
  expect((await requests.create()).status).toBe(201);
  expect((await requests.profile()).status).toBe(200);
  const healthAfter = await send("GET", "/api/v1/health");
  expect({ status: healthAfter.status, database: healthAfter.body?.database }).toEqual({
    status: 200,
    database: "ok",
  });
  // The dispatcher, polling less often while it failed, finds the database again, and the server takes
  // the jobs' lease again.
  expect(await waitForLog(/webhook dispatcher: polling again/, 15)).toBe(true);
  const deadline = Date.now() + 10_000;
  while (leasesTaken() === takenBeforeTheRestart && Date.now() < deadline) await Bun.sleep(50);
  expect(leasesTaken()).toBe(takenBeforeTheRestart + 1);
  expect(server.process.exitCode).toBeNull();
}, 60_000);

test("a statement that waits longer than database.timeout_seconds (a lock held elsewhere) ends with 503 database_unavailable", async () => {
  const { body } = await send("POST", "/api/v1/auth/login", undefined, ADMIN);
  const requests = everydayRequests(body?.token ?? "");
  const holder = new SQL(databaseUrl, { max: 1 });
  try {
    const lock = await lockTable(holder, "policies");
    expectServerErrors(503);
    expectDatabaseUnavailable(await requests.list());
    await lock.release();
    expect((await requests.list()).status).toBe(200);
  } finally {
    await holder.close({ timeout: 0 });
  }
}, 60_000);

/** Takes `table` in ACCESS EXCLUSIVE mode, in a transaction on `sql` held until `release`. */
async function lockTable(sql: SQL, table: string): Promise<{ release: () => Promise<void> }> {
  const released = Promise.withResolvers<void>();
  const locked = Promise.withResolvers<void>();
  const holding = sql.begin(async (tx) => {
    await tx.unsafe(`LOCK TABLE ${table} IN ACCESS EXCLUSIVE MODE`);
    locked.resolve();
    await released.promise;
  });
  await Promise.race([locked.promise, holding]);
  return {
    release: async () => {
      released.resolve();
      await holding;
    },
  };
}

/**
 * Runs `work` with a second server that reaches PostgreSQL through a relay the test can freeze, signed
 * in; stops both after it.
 */
async function withPartitionableServer(
  work: (context: {
    relay: TcpRelay;
    server: RunningServer;
    requests: ReturnType<typeof everydayRequests>;
  }) => Promise<void>,
): Promise<void> {
  const relay = await startTcpRelay(cluster.port);
  const cwd = mkdtempSync(join(tmpdir(), "bulwark-pg-partition-"));
  const behindRelay = await startOn(databaseUrl.replace(`:${cluster.port}/`, `:${relay.port}/`), cwd, {
    BULWARK_METRICS_ENABLED: "true",
  });
  try {
    const signedIn = await send("POST", "/api/v1/auth/login", undefined, ADMIN, behindRelay);
    const requests = everydayRequests(signedIn.body?.token ?? "", behindRelay);
    expect((await requests.list()).status).toBe(200);
    await work({ relay, server: behindRelay, requests });
    expect(behindRelay.process.exitCode).toBeNull();
  } finally {
    await behindRelay.stop("SIGKILL");
    await relay.close();
    rmSync(cwd, { recursive: true, force: true });
  }
}

test("when PostgreSQL stops answering on open connections (a network partition), requests answer 503 database_unavailable instead of waiting, and nothing refused is committed", async () => {
  await withPartitionableServer(async ({ relay, server: behindRelay, requests }) => {
    expectServerErrors(503);
    relay.freeze();
    const refusedName = `Refused ${crypto.randomUUID()}`;
    const answers = await Promise.all([
      requests.signIn(),
      requests.list(),
      requests.create(refusedName),
      requests.profile(),
      send("GET", "/metrics", undefined, undefined, behindRelay),
    ]);
    for (const answer of answers) expectDatabaseUnavailable(answer);
    const health = await send("GET", "/api/v1/health", undefined, undefined, behindRelay);
    expect({ status: health.status, database: health.body?.database }).toEqual({
      status: 503,
      database: "unreachable",
    });

    // The partition heals: what was held reaches PostgreSQL, the refused write is rolled back.
    relay.thaw();
    expect((await requests.signIn()).status).toBe(200);
    expect((await requests.create()).status).toBe(201);
    const listed = await requests.list();
    expect(listed.status).toBe(200);
    const names = ((listed.body?.data ?? []) as { name: string }[]).map((policy) => policy.name);
    expect(names).not.toContain(refusedName);
  });
}, 60_000);

test("a transaction cut off by a partition halfway through answers 503 and is rolled back, not committed once the partition heals", async () => {
  await withPartitionableServer(async ({ relay, requests }) => {
    const direct = new SQL(databaseUrl, { max: 2 });
    try {
      // The policy's own rows are written, then its audit row waits for a lock held here: the
      // partition starts while that statement is on the server, and the lock is given back at once.
      const lock = await lockTable(direct, "audit_logs");
      expectServerErrors(503);
      const refusedName = `Cut off ${crypto.randomUUID()}`;
      const creating = requests.create(refusedName);
      expect(await waitForLockWait(direct, "audit_logs")).toBe(true);
      relay.freeze();
      await lock.release();
      expectDatabaseUnavailable(await creating);

      relay.thaw();
      expect((await requests.create()).status).toBe(201);
      // Once no transaction is left open on the database, the cut-off one has ended: rolled back.
      expect(await waitForNoOpenTransaction(direct)).toBe(true);
      const [kept] = await direct`SELECT count(*)::int AS count FROM policies WHERE name = ${refusedName}`;
      expect(kept.count).toBe(0);
    } finally {
      await direct.close({ timeout: 0 });
    }
  });
}, 60_000);

/** Whether `count` statements of other sessions come to wait for a lock on `table` within ten seconds. */
async function waitForLockWait(sql: SQL, table: string, count = 1): Promise<boolean> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const [row] = await sql`
      SELECT count(*)::int AS count FROM pg_stat_activity
      WHERE wait_event_type = 'Lock' AND query ILIKE ${`%${table}%`} AND pid <> pg_backend_pid()`;
    if (row.count >= count) return true;
    await Bun.sleep(5);
  }
  return false;
}

/** Whether, within ten seconds, no session on the database is inside a transaction but this one's. */
async function waitForNoOpenTransaction(sql: SQL): Promise<boolean> {
  const deadline = Date.now() + 10_000;
  while (Date.now() < deadline) {
    const [row] = await sql`
      SELECT count(*)::int AS count FROM pg_stat_activity
      WHERE datname = current_database() AND xact_start IS NOT NULL AND pid <> pg_backend_pid()`;
    if (row.count === 0) return true;
    await Bun.sleep(50);
  }
  return false;
}

/** The value of one sample of a scrape (a series without labels); undefined when it is absent. */
function sample(text: string, name: string): number | undefined {
  const line = text.split("\n").find((each) => each.startsWith(`${name} `));
  return line === undefined ? undefined : Number(line.slice(name.length + 1));
}

/** promtool's own verdict on a scrape: its exit code and what it printed. */
function promtoolCheck(text: string) {
  const result = Bun.spawnSync(["promtool", "check", "metrics"], { stdin: new TextEncoder().encode(text) });
  return { code: result.exitCode, output: `${result.stdout.toString()}${result.stderr.toString()}`.trim() };
}

test("GET /metrics shows the connection pool (its maximum, open connections, transactions holding and waiting for one) and the transactions retried after a serialization failure; promtool accepts it", async () => {
  const cwd = mkdtempSync(join(tmpdir(), "bulwark-pg-metrics-"));
  const pooled = await startOn(databaseUrl, cwd, {
    BULWARK_DATABASE_POOL_SIZE: "3",
    BULWARK_METRICS_ENABLED: "true",
  });
  const direct = new SQL(databaseUrl, { max: 2 });
  const scrape = async () => (await fetch(`${pooled.url}/metrics`)).text();
  try {
    const { body } = await send("POST", "/api/v1/auth/login", undefined, ADMIN, pooled);
    const requests = everydayRequests(body?.token ?? "", pooled);

    // A server runs one transaction at a time: the first create holds its turn, waiting for a lock held
    // here, and the next ones wait for theirs. What a scrape taken then shows.
    const lock = await lockTable(direct, "policies");
    expectServerErrors(503);
    const creating = [requests.create(), requests.create(), requests.create()];
    expect(await waitForLockWait(direct, "policies", 1)).toBe(true);
    let busy = await scrape();
    for (
      let tries = 0;
      tries < 50 && (sample(busy, "bulwark_db_pool_waiting_transactions") ?? 0) < 2;
      tries++
    ) {
      await Bun.sleep(20);
      busy = await scrape();
    }
    await lock.release();
    for (const answer of await Promise.all(creating)) expect([201, 503]).toContain(answer.status);
    expect(promtoolCheck(busy)).toEqual({ code: 0, output: "" });
    expect(sample(busy, "bulwark_db_pool_max_connections")).toBe(3);
    expect(sample(busy, "bulwark_db_pool_active_transactions")).toBe(1);
    expect(sample(busy, "bulwark_db_pool_waiting_transactions")).toBe(2);
    const open = sample(busy, "bulwark_db_pool_open_connections") ?? 0;
    expect(open).toBeGreaterThanOrEqual(1);
    expect(open).toBeLessThanOrEqual(3);

    // A failed sign-in's count is written in a SERIALIZABLE transaction: a row changed under it by
    // another session (here, while the sign-in waits for that row) makes PostgreSQL refuse it with a
    // serialization failure, and the transaction is run again.
    const stranger = { email: `nobody-${crypto.randomUUID()}@example.com`, password: "not-the-password" };
    const signIn = () => send("POST", "/api/v1/auth/login", undefined, stranger, pooled);
    expect((await signIn()).status).toBe(401);
    const before = sample(await scrape(), "bulwark_db_transaction_retries_total") ?? 0;
    const changing = await direct.reserve();
    try {
      await changing`BEGIN`;
      await changing`UPDATE login_failures SET failures = failures WHERE email = ${stranger.email}`;
      const refused = signIn();
      expect(await waitForLockWait(direct, "login_failures")).toBe(true);
      await changing`COMMIT`;
      expect((await refused).status).toBe(401);
    } finally {
      changing.release();
    }
    const after = await scrape();
    expect(promtoolCheck(after)).toEqual({ code: 0, output: "" });
    expect((sample(after, "bulwark_db_transaction_retries_total") ?? 0) - before).toBeGreaterThanOrEqual(1);
  } finally {
    await direct.close({ timeout: 0 });
    await pooled.stop("SIGKILL");
    rmSync(cwd, { recursive: true, force: true });
  }
}, 60_000);
