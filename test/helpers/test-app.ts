import type { Database } from "bun:sqlite";
import { afterEach, test } from "bun:test";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildApp } from "../../src/app";
import { bootDependencies } from "../../src/boot";
import type { Config } from "../../src/config/config-schema";
import { type DeepPartial, loadConfig } from "../../src/config/load-config";
import { setOrganizationPlan } from "../../src/domain/organizations/set-organization-plan";
import { confirmSsoDomain, removeSsoDomain } from "../../src/domain/sso/sso-domains";
import { createAdmin } from "../../src/domain/users/bootstrap-admin";
import { observeRequests } from "../../src/http/observe-requests";
import { FakeClock } from "../../src/lib/clock";
import { executablePath, startServer } from "./binary";
import { dropPgDatabase, newMigratedPgDatabase } from "./pg-stores";
import { startReplicaSet } from "./replicas";
import { noteServerAnswer } from "./server-errors";

export const TEST_PASSWORD = "correct-horse-battery";

/**
 * Where the HTTP suites send their requests: `in-process` (the app through `app.handle`, with a fake
 * clock and the database at hand), `executable` (TEST_TARGET=executable: the built dist/bulwark,
 * started per app on a real port with a temporary data folder) or `replicas` (TEST_TARGET=replicas,
 * PostgreSQL only: two dist/bulwark on one database behind HAProxy with deploy/haproxy-replicas.cfg,
 * test/helpers/replicas.ts). `npm test` runs each.
 */
export const TEST_TARGET: "in-process" | "executable" | "replicas" =
  process.env.TEST_TARGET === "executable" || process.env.TEST_TARGET === "replicas"
    ? process.env.TEST_TARGET
    : "in-process";

/**
 * A test that needs the in-process app: it moves the fake clock, or reads or writes the database
 * directly. In the executable and replicas passes it is reported as skipped (bun lists it), never
 * silently dropped.
 */
export const inProcessTest: typeof test = TEST_TARGET === "in-process" ? test : test.skip;

export interface TestResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface RequestOptions {
  token?: string;
  body?: unknown;
  /** Raw body text, sent as is (for malformed JSON tests). */
  rawBody?: string;
  headers?: Record<string, string>;
}

/**
 * The settings every test app starts from: cheap hashes, since tests need thousands of sign-ins; and
 * /22 subnets of the default VPN pool (64 organizations of 1,022 devices, where the default /20 makes
 * 16), since a suite's app holds dozens of organizations. A test that sets its own pool sizes them itself.
 */
function testConfigOverrides(overrides: DeepPartial<Config>): DeepPartial<Config> {
  return {
    ...overrides,
    database: { path: ":memory:", synchronous: "normal", ...overrides.database },
    auth: { password_hash_memory_kib: 64, password_hash_iterations: 1, ...overrides.auth },
    vpn: {
      ...(overrides.vpn?.address_pool === undefined ? { organization_prefix_length: 22 } : {}),
      ...overrides.vpn,
    },
  };
}

/** Sends `method path` through `send` and decodes the answer; every answer is shown to the 5xx watch. */
export function requester(send: (path: string, init: RequestInit) => Promise<Response>) {
  return async function request<T = any>(
    method: string,
    path: string,
    options: RequestOptions = {},
  ): Promise<TestResponse<T>> {
    const headers: Record<string, string> = { accept: "application/json", ...options.headers };
    if (options.token) headers.authorization = `Bearer ${options.token}`;
    let body: string | undefined;
    if (options.rawBody !== undefined) {
      body = options.rawBody;
      headers["content-type"] ??= "application/json";
    } else if (options.body !== undefined) {
      body = JSON.stringify(options.body);
      headers["content-type"] ??= "application/json";
    }
    const response = await send(path, { method, headers, body });
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text === "" ? null : JSON.parse(text);
    } catch {
      parsed = text;
    }
    noteServerAnswer(method, path, response.status, parsed);
    return { status: response.status, body: parsed as T, headers: response.headers };
  };
}

type Request_ = ReturnType<typeof requester>;

/** Sign-in, organizations, users and keys, all through the API (organizations through `createAdmin`). */
function apiHelpers(request: Request_, createAdminAccount: (email: string, org: string) => Promise<void>) {
  /** Signs in and returns the login response body (token, refresh_token, user...). */
  async function signIn(email: string, password = TEST_PASSWORD) {
    const response = await request("POST", "/api/v1/auth/login", { body: { email, password } });
    if (response.status !== 200)
      throw new Error(`sign-in of ${email} failed: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body as {
      token: string;
      refresh_token: string;
      user: { id: string; organization_id: string };
    };
  }

  let organizationCounter = 0;
  /** A new organization with an admin, signed in. */
  async function createOrganization(name = `Org ${++organizationCounter}`) {
    const email = `admin-${crypto.randomUUID().slice(0, 8)}@example.com`;
    await createAdminAccount(email, name);
    const session = await signIn(email);
    return {
      organizationId: session.user.organization_id,
      adminId: session.user.id,
      adminEmail: email,
      adminToken: session.token,
      session,
    };
  }

  /** A user with `role` in the organization of `adminToken`, signed in. */
  async function createUser(adminToken: string, role: "admin" | "operator" | "auditor" | "member") {
    const email = `${role}-${crypto.randomUUID().slice(0, 8)}@example.com`;
    const response = await request("POST", "/api/v1/users", {
      token: adminToken,
      body: { email, name: `Test ${role}`, role, password: TEST_PASSWORD },
    });
    if (response.status !== 201)
      throw new Error(`creating ${role} failed: ${response.status} ${JSON.stringify(response.body)}`);
    const session = await signIn(email);
    return { id: response.body.id as string, email, token: session.token, session };
  }

  /** An API key with exactly `scopes`, created by the holder of `token`. */
  async function createApiKey(token: string, scopes: string[]) {
    const response = await request("POST", "/api/v1/auth/api-keys", {
      token,
      body: { name: `key ${scopes.join(" ")}`, scopes },
    });
    if (response.status !== 201)
      throw new Error(`creating API key failed: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body.key as string;
  }

  return { signIn, createOrganization, createUser, createApiKey };
}

/** `init` with a Content-Length for its text body, unless the caller set one. */
function withContentLength(init: RequestInit): RequestInit {
  if (typeof init.body !== "string") return init;
  const headers = { ...(init.headers as Record<string, string>) };
  headers["content-length"] ??= String(Buffer.byteLength(init.body));
  return { ...init, headers };
}

/**
 * The store the suites run on: SQLite (the default) or PostgreSQL (TEST_STORE=postgresql: `npm test`'s
 * third and fourth passes), on the throwaway cluster of test/helpers/pg-cluster.ts.
 */
export const TEST_STORE: "sqlite" | "postgresql" =
  process.env.TEST_STORE === "postgresql" || TEST_TARGET === "replicas" ? "postgresql" : "sqlite";

/** PostgreSQL databases standing for the database files tests name (one each, kept for the process). */
const pgDatabaseOfPath = new Map<string, Promise<string>>();
/** Their URLs: an app on one of them leaves it in place when it closes, for the next app on that path. */
const namedPgDatabases = new Set<string>();

/** Drops an app's PostgreSQL database when it closes, unless a test named it (see testStoreDatabase). */
async function dropUnnamedPgDatabase(url: string | undefined): Promise<void> {
  if (url && !namedPgDatabases.has(url)) await dropPgDatabase(url);
}

/**
 * The database settings of an app on TEST_STORE: on PostgreSQL a new migrated database and a key file.
 * A test that names its database file (to start a second app on the same data, or to remove its key
 * file) gets the same PostgreSQL database for the same path, with its key file at `<path>.key`.
 */
async function testStoreDatabase(
  overrides: DeepPartial<Config>,
  keyFile: string,
): Promise<Partial<Config["database"]>> {
  if (TEST_STORE !== "postgresql") return {};
  const path = overrides.database?.path;
  if (path === undefined || path === ":memory:")
    return { url: await newMigratedPgDatabase(), key_file: overrides.database?.key_file ?? keyFile };
  let url = pgDatabaseOfPath.get(path);
  if (!url) {
    url = newMigratedPgDatabase();
    pgDatabaseOfPath.set(path, url);
  }
  namedPgDatabases.add(await url);
  return { url: await url, key_file: overrides.database?.key_file ?? `${path}.key` };
}

/**
 * Where in-process apps keep their databases: a file each, as `serve` keeps it (a writer and a reader
 * connection; an in-memory database would have only one), in memory-backed storage where there is one.
 * Removed when the test process exits.
 */
let databaseFolder: string | undefined;
function newDatabasePath(): string {
  if (!databaseFolder) {
    const folder = mkdtempSync(join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "bulwark-test-db-"));
    process.on("exit", () => rmSync(folder, { recursive: true, force: true }));
    databaseFolder = folder;
  }
  return join(databaseFolder, `${crypto.randomUUID()}.db`);
}

/**
 * The real app on a fresh database file with real migrations and a fake clock. `request` goes through
 * `app.handle`, exactly like a network request would.
 */
async function createInProcessTestApp(overrides: DeepPartial<Config>) {
  const configured = testConfigOverrides(overrides);
  const databasePath =
    configured.database?.path === ":memory:" ? newDatabasePath() : configured.database?.path;
  const store = await testStoreDatabase(overrides, `${databasePath}.key`);
  const settings = { ...configured, database: { ...configured.database, path: databasePath, ...store } };
  const config = loadConfig({
    env: {},
    overrides: {
      ...settings,
      // serve fills an empty base_url in from the port it listens on; in-process there is no port.
      server: { base_url: "http://localhost:8080", ...settings.server },
      log: { format: "json", ...settings.log },
    },
  });
  const clock = new FakeClock("2026-11-01T12:00:00.000Z");
  // Assembled as `serve` assembles it (bootDependencies), on an in-memory database and the fake clock.
  // The log is kept for the test to read; errors are shown too, since nobody reads an in-memory log.
  const logLines: string[] = [];
  const { deps, database } = await bootDependencies(config, clock, (line) => {
    logLines.push(line);
    if (line.includes('"level":"error"')) console.error(line);
  });
  const app = buildApp(deps);
  // Through the server's own entry point, which logs and measures every answer.
  const handle = observeRequests(app, deps);
  // A body goes with its Content-Length, as a client on the network sends it: the fast lane
  // (src/http/fast-lane.ts) judges only bodies that declare their length.
  const request = requester((path, init) =>
    handle(new Request(`http://localhost${path}`, withContentLength(init))),
  );
  const helpers = apiHelpers(request, async (email, org) => {
    await createAdmin(deps, { email, password: TEST_PASSWORD, org });
  });
  return {
    target: "in-process" as "in-process" | "executable",
    /** A raw request (streamed bodies, odd headers), answered as the app answers it. */
    fetch: (path: string, init: RequestInit) => handle(new Request(`http://localhost${path}`, init)),
    /**
     * The same request to each server on its own, bypassing the load balancer: one here and for the
     * executable, each replica for replicas (per-process answers such as /metrics).
     */
    fetchEach: (path: string, init: RequestInit = {}) =>
      Promise.all([handle(new Request(`http://localhost${path}`, init))]),
    app,
    /** The log lines the app has written (JSON). */
    logLines,
    deps,
    /** The store the app runs on (TEST_STORE). */
    store: database.store,
    /** SQLite's writer connection, on which every transaction runs (`deps.db` reads on another one). */
    writer: (database.store === "sqlite" ? database.sqlite : undefined) as Database,
    clock,
    config,
    request,
    ...helpers,
    /** The app's time: the fake clock's. */
    now: () => clock.now(),
    /** Sets an organization's plan as the operator does (`bulwark org set-plan`). */
    setPlan: async (organization: string, plan: "standard" | "enterprise") => {
      await setOrganizationPlan(deps, { organization, plan });
    },
    /** Confirms an email domain for an organization as the operator does (`bulwark org sso-domain add`). */
    confirmSsoDomain: async (organization: string, domain: string) => {
      await confirmSsoDomain(deps, { organization, domain });
    },
    /** Takes an email domain from an organization as the operator does (`bulwark org sso-domain remove`). */
    removeSsoDomain: async (organization: string, domain: string) => {
      await removeSsoDomain(deps, { organization, domain });
    },
    close: async () => {
      await database.close();
      await dropUnnamedPgDatabase(store.url);
      if (databasePath !== overrides.database?.path)
        for (const suffix of ["", "-wal", "-shm", ".key"])
          rmSync(`${databasePath}${suffix}`, { force: true });
    },
  };
}

export type TestApp = Awaited<ReturnType<typeof createInProcessTestApp>>;

/** `BULWARK_<SECTION>_<KEY>` variables for config overrides (lists comma-separated, maps as name=value). */
function configEnvironment(overrides: DeepPartial<Config>): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [section, values] of Object.entries(overrides)) {
    for (const [key, value] of Object.entries(values as Record<string, unknown>)) {
      if (value === undefined) continue;
      env[`BULWARK_${section}_${key}`.toUpperCase()] = Array.isArray(value)
        ? value.join(",")
        : typeof value === "object" && value !== null
          ? Object.entries(value)
              .map(([name, inner]) => `${name}=${inner}`)
              .join(",")
          : String(value);
    }
  }
  return env;
}

const NEEDS_IN_PROCESS = (what: string) => () => {
  throw new Error(`${what} is only there in-process: mark this test inProcessTest`);
};

/**
 * The built executable, started from an empty folder on port 0 with the same settings passed as
 * environment variables; organizations are created with `bulwark admin create`, as an operator would.
 */
async function createExecutableTestApp(overrides: DeepPartial<Config>): Promise<TestApp> {
  const folder = mkdtempSync(join(tmpdir(), "bulwark-test-"));
  const settings = testConfigOverrides(overrides);
  const store = await testStoreDatabase(overrides, join(folder, "bulwark.key"));
  const env = configEnvironment({
    ...settings,
    database: { ...settings.database, path: join(folder, "bulwark.db"), ...store },
  });
  const binary = await executablePath();
  // Behind HAProxy the suites' client stands for a load balancer that ends TLS before it: the
  // X-Forwarded-For and Client-Cert headers it sends are passed on (BULWARK_TRUSTED_UPSTREAM and
  // BULWARK_UPSTREAM_CLIENT_CERT; test/binary/deploy.test.ts checks that nobody else's are).
  const server =
    TEST_TARGET === "replicas"
      ? await startReplicaSet(binary, folder, env, { trustedUpstream: "127.0.0.1", upstreamClientCert: true })
      : await startServer(binary, folder, env);
  await awaitRoomInRateLimitWindow(settings);
  const config = loadConfig({
    env: {},
    // What serve itself uses when base_url is not set (loopback is named localhost).
    overrides: {
      ...settings,
      server: { base_url: `http://localhost:${new URL(server.url).port}`, ...settings.server },
    },
  });
  const request = requester((path, init) => fetch(`${server.url}${path}`, init));
  const helpers = apiHelpers(request, async (email, org) => {
    const passwordFile = join(folder, "admin-password");
    writeFileSync(passwordFile, TEST_PASSWORD, { mode: 0o600 });
    const run = Bun.spawn(
      [binary, "admin", "create", "--email", email, "--password-file", passwordFile, "--org", org],
      { cwd: folder, env: { PATH: process.env.PATH ?? "", ...env }, stdout: "pipe", stderr: "pipe" },
    );
    if ((await run.exited) !== 0)
      throw new Error(`admin create failed: ${await new Response(run.stderr).text()}`);
  });
  /** A command of the executable on the server's data folder, as the operator runs it while it serves. */
  const operator = async (args: string[]) => {
    const run = Bun.spawn([binary, ...args], {
      cwd: folder,
      env: { PATH: process.env.PATH ?? "", ...env },
      stdout: "pipe",
      stderr: "pipe",
    });
    if ((await run.exited) !== 0)
      throw new Error(
        `bulwark ${args.slice(0, 2).join(" ")} failed: ${await new Response(run.stderr).text()}`,
      );
  };
  const app = {
    target: "executable" as const,
    fetch: (path: string, init: RequestInit) => fetch(`${server.url}${path}`, init),
    fetchEach: (path: string, init: RequestInit = {}) =>
      Promise.all(
        ("replicas" in server ? server.replicas : [server]).map((each) => fetch(`${each.url}${path}`, init)),
      ),
    config,
    request,
    ...helpers,
    now: () => new Date(),
    /** What the executable has printed, line by line (its log). */
    get logLines() {
      return server
        .output()
        .split("\n")
        .filter((line) => line !== "");
    },
    setPlan: (organization: string, plan: "standard" | "enterprise") =>
      operator(["org", "set-plan", "--org", organization, "--plan", plan]),
    confirmSsoDomain: (organization: string, domain: string) =>
      operator(["org", "sso-domain", "add", "--org", organization, domain]),
    removeSsoDomain: (organization: string, domain: string) =>
      operator(["org", "sso-domain", "remove", "--org", organization, domain]),
    close: async () => {
      await server.stop();
      await dropUnnamedPgDatabase(store.url);
      rmSync(folder, { recursive: true, force: true });
    },
  };
  for (const name of ["app", "deps", "clock", "writer"])
    Object.defineProperty(app, name, { get: NEEDS_IN_PROCESS(`t.${name}`) });
  return app as unknown as TestApp;
}

/** A log line as JSON; null for a line that is not (the executable's stderr shares the output). */
function jsonOrNull(line: string): Record<string, unknown> | null {
  try {
    return JSON.parse(line);
  } catch {
    return null;
  }
}

/**
 * The log entry of the request answered with `requestId` (the first, or the first whose `msg` is
 * `message`). The executable writes its request lines when the event-loop turn that answered them ends
 * (src/lib/log.ts), so a line may follow its answer by a moment: this waits up to 2 s for it (under the
 * test's own timeout, so a missing line says so).
 */
export async function requestLogEntry(
  t: TestApp,
  requestId: string | null,
  message?: string,
): Promise<Record<string, unknown>> {
  const deadline = Date.now() + 2000;
  for (;;) {
    const entry = t.logLines
      .map(jsonOrNull)
      .find((each) => each?.request_id === requestId && (message === undefined || each.msg === message));
    if (entry) return entry;
    if (Date.now() > deadline) throw new Error(`no log line for request ${requestId}`);
    await Bun.sleep(5);
  }
}

/**
 * The app the suites test: in-process, or the executable (TEST_TARGET=executable), or two replicas of
 * it behind HAProxy (TEST_TARGET=replicas).
 */
export function createTestApp(overrides: DeepPartial<Config> = {}): Promise<TestApp> {
  return TEST_TARGET === "in-process"
    ? createInProcessTestApp(overrides)
    : createExecutableTestApp(overrides);
}

/**
 * A factory of fresh test apps for one test file: each app is closed after the test that made it.
 * `defaults` apply to every app, section by section under the overrides of each call.
 */
export function freshTestApps(defaults: DeepPartial<Config> = {}) {
  const apps: TestApp[] = [];
  afterEach(async () => {
    await Promise.all(apps.splice(0).map((app) => app.close()));
  });
  return async (overrides: DeepPartial<Config> = {}): Promise<TestApp> => {
    const merged: Record<string, unknown> = { ...defaults };
    for (const [section, values] of Object.entries(overrides)) {
      merged[section] = {
        ...(defaults[section as keyof Config] as object | undefined),
        ...(values as object),
      };
    }
    const app = await createTestApp(merged as DeepPartial<Config>);
    apps.push(app);
    return app;
  };
}

/**
 * Confirms, as the operator does, every email domain the organization's SSO settings claim that
 * discovery and new accounts do not use yet: on an installation of several organizations (the
 * executable's first start makes one of its own), a claim needs the operator's confirmation.
 */
export async function confirmSsoDomainsOf(t: TestApp, org: { organizationId: string; adminToken: string }) {
  const current = await t.request("GET", "/api/v1/organizations/current", { token: org.adminToken });
  for (const claim of current.body.sso_domains as { domain: string; discoverable: boolean }[])
    if (!claim.discoverable) await t.confirmSsoDomain(org.organizationId, claim.domain);
}

/**
 * The executable counts requests in fixed one-minute windows of its real clock. A test that sets a small
 * limit and expects the request after it to be refused would pass its limit into the next window if the
 * minute turned between the two: with such a limit, start with at least 2 s left in the current minute
 * (a wait that stays well inside the test's own time limit).
 */
async function awaitRoomInRateLimitWindow(settings: Record<string, unknown>): Promise<void> {
  const limits = Object.values((settings.rate_limit ?? {}) as Record<string, number>);
  if (!limits.some((limit) => limit <= 100)) return;
  const left = 60_000 - (Date.now() % 60_000);
  if (left < 2_000) await Bun.sleep(left + 50);
}
