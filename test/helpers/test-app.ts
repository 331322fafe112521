import { afterEach } from "bun:test";
import { buildApp } from "../../src/app";
import type { Config } from "../../src/config/config-schema";
import { type DeepPartial, loadConfig } from "../../src/config/load-config";
import { openDatabase } from "../../src/db/client";
import { migrateDatabase } from "../../src/db/migrate";
import { loadOrCreateTokenKeys } from "../../src/domain/auth/token-keys";
import { createAdmin } from "../../src/domain/users/bootstrap-admin";
import type { AppDeps } from "../../src/http/app-deps";
import { InMemoryRateLimiter } from "../../src/http/rate-limiter";
import { FakeClock } from "../../src/lib/clock";

export const TEST_PASSWORD = "correct-horse-battery";

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
 * The real app on an in-memory database with real migrations and a fake clock. `request` goes through
 * `app.handle`, exactly like a network request would.
 */
export async function createTestApp(overrides: DeepPartial<Config> = {}) {
  const config = loadConfig({
    env: {},
    overrides: {
      ...overrides,
      // serve fills an empty base_url in from the port it listens on; in-process there is no port.
      server: { base_url: "http://localhost:8080", ...overrides.server },
      database: { path: ":memory:", synchronous: "normal", ...overrides.database },
      // Tests need hashes, not strong ones: the cheapest argon2id keeps thousands of sign-ins fast.
      auth: { password_hash_memory_kib: 64, password_hash_iterations: 1, ...overrides.auth },
    },
  });
  const clock = new FakeClock("2026-11-01T12:00:00.000Z");
  const database = openDatabase({ path: ":memory:", synchronous: "normal" });
  migrateDatabase(database.sqlite);
  const deps: AppDeps = {
    db: database.db,
    config,
    clock,
    keys: await loadOrCreateTokenKeys(database.db, clock.now()),
    rateLimiter: new InMemoryRateLimiter(),
    version: "test",
    startedAt: clock.now(),
  };
  const app = buildApp(deps);

  async function request<T = any>(
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
    const response = await app.handle(new Request(`http://localhost${path}`, { method, headers, body }));
    const text = await response.text();
    let parsed: unknown = text;
    try {
      parsed = text === "" ? null : JSON.parse(text);
    } catch {
      parsed = text;
    }
    return { status: response.status, body: parsed as T, headers: response.headers };
  }

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
    const created = await createAdmin(deps, { email, password: TEST_PASSWORD, org: name });
    const session = await signIn(email);
    return {
      organizationId: created.organizationId,
      adminId: created.userId,
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

  return {
    app,
    deps,
    clock,
    config,
    request,
    signIn,
    createOrganization,
    createUser,
    createApiKey,
    close: () => database.close(),
  };
}

export type TestApp = Awaited<ReturnType<typeof createTestApp>>;

/**
 * A factory of fresh test apps for one test file: each app is closed after the test that made it.
 * `defaults` apply to every app, section by section under the overrides of each call.
 */
export function freshTestApps(defaults: DeepPartial<Config> = {}) {
  const apps: TestApp[] = [];
  afterEach(() => {
    for (const app of apps.splice(0)) app.close();
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
