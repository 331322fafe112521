import { describe, expect, spyOn, test } from "bun:test";
import { VERSION } from "../../src/version";
import { expectServerErrors } from "../helpers/server-errors";
import {
  freshTestApps,
  inProcessTest,
  TEST_STORE,
  type TestApp,
  type TestResponse,
} from "../helpers/test-app";

const newApp = freshTestApps();

const MIB = 1024 * 1024;

function expectRateLimitHeaders(t: TestApp, response: TestResponse) {
  const limit = response.headers.get("x-ratelimit-limit");
  const remaining = response.headers.get("x-ratelimit-remaining");
  const reset = response.headers.get("x-ratelimit-reset");
  expect(limit).toMatch(/^\d+$/);
  expect(remaining).toMatch(/^\d+$/);
  expect(reset).toMatch(/^\d+$/);
  expect(Number(remaining)).toBeLessThanOrEqual(Number(limit));
  const nowSeconds = t.now().getTime() / 1000;
  expect(Number(reset)).toBeGreaterThan(nowSeconds);
  expect(Number(reset)).toBeLessThanOrEqual(nowSeconds + 60);
}

function expectErrorBody(response: TestResponse, status: number) {
  expect(response.status).toBe(status);
  expect(response.headers.get("content-type")).toContain("application/json");
  expect(response.body.code).toBe(status);
  expect(typeof response.body.message).toBe("string");
  expect(response.body.message.length).toBeGreaterThan(0);
  const text = JSON.stringify(response.body);
  expect(text).not.toMatch(/\n\s+at |\.ts:\d+|node_modules|stack/i);
}

describe("headers on every response", () => {
  test("200, 204, 400, 401, 403, 404, 405, 409, 413 and 429 all carry X-Request-Id and X-RateLimit-*", async () => {
    const t = await newApp({ rate_limit: { unauthenticated_per_minute: 10 } });
    const org = await t.createOrganization();
    const member = await t.createUser(org.adminToken, "member");
    const key = await t.request("POST", "/api/v1/auth/api-keys", {
      token: org.adminToken,
      body: { name: "x", scopes: ["users:read"] },
    });

    const responses: [number, TestResponse][] = [
      [200, await t.request("GET", "/api/v1/health")],
      [204, await t.request("DELETE", `/api/v1/auth/api-keys/${key.body.id}`, { token: org.adminToken })],
      [400, await t.request("POST", "/api/v1/auth/login", { body: {} })],
      [401, await t.request("GET", "/api/v1/users")],
      [403, await t.request("GET", "/api/v1/users", { token: member.token })],
      [404, await t.request("GET", "/api/v1/no-such-thing")],
      [405, await t.request("DELETE", "/api/v1/health")],
      [409, await t.request("DELETE", `/api/v1/users/${org.adminId}`, { token: org.adminToken })],
      [413, await t.request("POST", "/api/v1/auth/login", { rawBody: "x".repeat(MIB + 1) })],
    ];
    let limited: TestResponse;
    do limited = await t.request("GET", "/api/v1/health");
    while (limited.status === 200);
    responses.push([429, limited]);

    for (const [status, response] of responses) {
      expect(response.status).toBe(status);
      expect(response.headers.get("x-request-id")).toMatch(/^[A-Za-z0-9._-]+$/);
      expectRateLimitHeaders(t, response);
    }
    const ids = responses.map(([, response]) => response.headers.get("x-request-id"));
    expect(new Set(ids).size).toBe(ids.length);
  });

  test("an incoming X-Request-Id is echoed, in the header and in error bodies", async () => {
    const t = await newApp();
    const ok = await t.request("GET", "/api/v1/health", { headers: { "x-request-id": "trace-123.abc_DEF" } });
    expect(ok.headers.get("x-request-id")).toBe("trace-123.abc_DEF");

    const error = await t.request("GET", "/api/v1/users", { headers: { "x-request-id": "trace-456" } });
    expect(error.status).toBe(401);
    expect(error.headers.get("x-request-id")).toBe("trace-456");
    expect(error.body.request_id).toBe("trace-456");
  });

  test("an unusable incoming X-Request-Id is replaced by a fresh one", async () => {
    const t = await newApp();
    for (const incoming of ["has spaces in it", "x".repeat(200), "<script>"]) {
      const response = await t.request("GET", "/api/v1/health", { headers: { "x-request-id": incoming } });
      const id = response.headers.get("x-request-id");
      expect(id).not.toBe(incoming);
      expect(id).toMatch(/^[A-Za-z0-9._-]{1,128}$/);
    }
  });
});

describe("errors", () => {
  test("an unknown route is a 404 JSON error", async () => {
    const t = await newApp();
    for (const path of ["/api/v1/nope", "/api/v2/users", "/consoles", "/api/v1/users/me/nothing/here"]) {
      const response = await t.request("GET", path);
      expectErrorBody(response, 404);
    }
  });

  test("a known path with the wrong method is a 405 JSON error with Allow", async () => {
    const t = await newApp();
    const health = await t.request("POST", "/api/v1/health", { body: {} });
    expectErrorBody(health, 405);
    expect(health.headers.get("allow")).toBe("GET");

    const users = await t.request("PUT", "/api/v1/users");
    expectErrorBody(users, 405);
    expect(users.headers.get("allow")?.split(", ").sort()).toEqual(["GET", "POST"]);

    const login = await t.request("GET", "/api/v1/auth/login");
    expectErrorBody(login, 405);
    expect(login.headers.get("allow")).toBe("POST");
  });

  test("a body over 1 MiB is a 413 JSON error, with or without Content-Length", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const big = JSON.stringify({ name: "x".repeat(MIB) });

    const undeclared = await t.request("PATCH", "/api/v1/organizations/current", {
      token: org.adminToken,
      rawBody: big,
    });
    expectErrorBody(undeclared, 413);

    const declared = await t.request("PATCH", "/api/v1/organizations/current", {
      token: org.adminToken,
      rawBody: big,
      headers: { "content-length": String(big.length) },
    });
    expectErrorBody(declared, 413);

    // Streamed in chunks, as a chunked upload arrives: measured as it comes, answered without waiting.
    const chunk = new TextEncoder().encode("x".repeat(64 * 1024));
    const stream = new ReadableStream<Uint8Array>({
      start(controller) {
        for (let index = 0; index < 40; index++) controller.enqueue(chunk);
        controller.close();
      },
    });
    const streamed = await t.fetch("/api/v1/organizations/current", {
      method: "PATCH",
      headers: { authorization: `Bearer ${org.adminToken}`, "content-type": "application/json" },
      body: stream,
    });
    expect(streamed.status).toBe(413);
    expect(((await streamed.json()) as { code: number }).code).toBe(413);

    const current = await t.request("GET", "/api/v1/organizations/current", { token: org.adminToken });
    expect(current.body.name).not.toContain("xxxx");

    // Just under the limit is parsed normally (and then refused by validation, not by size).
    const justUnder = JSON.stringify({ name: "x".repeat(MIB - 20) });
    const under = await t.request("PATCH", "/api/v1/organizations/current", {
      token: org.adminToken,
      rawBody: justUnder,
    });
    expect(under.status).toBe(400);
    expect(under.body.details).toContain("name");
  });

  test("malformed JSON is a 400 invalid request body", async () => {
    const t = await newApp();
    const response = await t.request("POST", "/api/v1/auth/login", { rawBody: "{not json" });
    expectErrorBody(response, 400);
    expect(response.body.reason).toBe("invalid_json");
  });

  inProcessTest("error bodies never carry a stack trace, not even for an unexpected failure", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const responses = [
      await t.request("POST", "/api/v1/auth/login", { rawBody: "{" }),
      await t.request("GET", "/api/v1/users", { token: "garbage" }),
      await t.request("GET", `/api/v1/users/${crypto.randomUUID()}`, { token: org.adminToken }),
    ];
    for (const response of responses) expectErrorBody(response, response.status);

    // The database goes away: sign-in fails unexpectedly; the answer is a bare 500 (on PostgreSQL, whose
    // closed pool is the database gone, a bare 503).
    const [status, reason] = t.store === "sqlite" ? [500, "internal_error"] : [503, "database_unavailable"];
    expectServerErrors(status);
    t.close();
    const logged = spyOn(console, "error").mockImplementation(() => undefined);
    try {
      const failure = await t.request("POST", "/api/v1/auth/login", {
        body: { email: org.adminEmail, password: "whatever-it-is" },
      });
      expectErrorBody(failure, status);
      expect(failure.body.reason).toBe(reason);
      expect(failure.body.request_id).toBe(failure.headers.get("x-request-id"));
      expectRateLimitHeaders(t, failure);
      if (t.store === "sqlite") expect(logged).toHaveBeenCalled();
    } finally {
      logged.mockRestore();
    }
  });
});

describe("rate limits", () => {
  inProcessTest("unauthenticated requests are limited per address: the 4th of 3 is a 429", async () => {
    const t = await newApp({ rate_limit: { unauthenticated_per_minute: 3 } });
    const remaining: string[] = [];
    for (let index = 0; index < 3; index++) {
      const response = await t.request("GET", "/.well-known/jwks.json");
      expect(response.status).toBe(200);
      expect(response.headers.get("x-ratelimit-limit")).toBe("3");
      remaining.push(response.headers.get("x-ratelimit-remaining") ?? "");
    }
    expect(remaining).toEqual(["2", "1", "0"]);

    const limited = await t.request("GET", "/.well-known/jwks.json");
    expectErrorBody(limited, 429);
    expect(limited.headers.get("x-ratelimit-remaining")).toBe("0");
    const retryAfter = Number(limited.headers.get("retry-after"));
    expect(Number.isInteger(retryAfter)).toBe(true);
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(60);
    const reset = Number(limited.headers.get("x-ratelimit-reset"));
    expect(t.clock.now().getTime() / 1000 + retryAfter).toBeGreaterThanOrEqual(reset);

    // Other routes, errors and bad credentials count against the same address.
    expect((await t.request("POST", "/api/v1/auth/login", { body: {} })).status).toBe(429);
    expect((await t.request("GET", "/api/v1/users", { token: "garbage" })).status).toBe(429);
  });

  inProcessTest("the window resets after a minute", async () => {
    const t = await newApp({ rate_limit: { unauthenticated_per_minute: 3 } });
    for (let index = 0; index < 3; index++) await t.request("GET", "/.well-known/jwks.json");
    expect((await t.request("GET", "/.well-known/jwks.json")).status).toBe(429);

    t.clock.advanceSeconds(60);

    const response = await t.request("GET", "/.well-known/jwks.json");
    expect(response.status).toBe(200);
    expect(response.headers.get("x-ratelimit-remaining")).toBe("2");
  });

  test("addresses are counted separately (behind a trusted proxy)", async () => {
    const t = await newApp({ server: { trust_proxy: true }, rate_limit: { unauthenticated_per_minute: 1 } });
    const first = { "x-forwarded-for": "203.0.113.1" };
    const second = { "x-forwarded-for": "203.0.113.2" };
    expect((await t.request("GET", "/.well-known/jwks.json", { headers: first })).status).toBe(200);
    expect((await t.request("GET", "/.well-known/jwks.json", { headers: first })).status).toBe(429);
    expect((await t.request("GET", "/.well-known/jwks.json", { headers: second })).status).toBe(200);
  });

  test("behind a trusted proxy, the address the proxy appended counts, not ones the client forged", async () => {
    const t = await newApp({ server: { trust_proxy: true }, rate_limit: { unauthenticated_per_minute: 1 } });
    const proxied = (forged: string) => ({ "x-forwarded-for": `${forged}, 203.0.113.1` });
    expect(
      (await t.request("GET", "/.well-known/jwks.json", { headers: proxied("198.51.100.1") })).status,
    ).toBe(200);
    expect(
      (await t.request("GET", "/.well-known/jwks.json", { headers: proxied("198.51.100.2") })).status,
    ).toBe(429);
  });

  test("X-Forwarded-For is ignored unless the proxy is trusted", async () => {
    const t = await newApp({ rate_limit: { unauthenticated_per_minute: 1 } });
    expect(
      (await t.request("GET", "/.well-known/jwks.json", { headers: { "x-forwarded-for": "203.0.113.1" } }))
        .status,
    ).toBe(200);
    expect(
      (await t.request("GET", "/.well-known/jwks.json", { headers: { "x-forwarded-for": "203.0.113.2" } }))
        .status,
    ).toBe(429);
  });

  test("signed-in users have their own limit, separate from the address and from each other", async () => {
    const t = await newApp({ rate_limit: { unauthenticated_per_minute: 3, authenticated_per_minute: 5 } });
    const org = await t.createOrganization(); // one unauthenticated request (sign-in)
    const member = await t.createUser(org.adminToken, "member"); // one more, plus one for the admin

    expect((await t.request("GET", "/.well-known/jwks.json")).status).toBe(200);
    expect((await t.request("GET", "/.well-known/jwks.json")).status).toBe(429);

    const asAdmin = await t.request("GET", "/api/v1/users/me", { token: org.adminToken });
    expect(asAdmin.status).toBe(200);
    expect(asAdmin.headers.get("x-ratelimit-limit")).toBe("5");
    expect(asAdmin.headers.get("x-ratelimit-remaining")).toBe("3");
    for (let index = 0; index < 3; index++) {
      expect((await t.request("GET", "/api/v1/users/me", { token: org.adminToken })).status).toBe(200);
    }
    const limited = await t.request("GET", "/api/v1/users/me", { token: org.adminToken });
    expectErrorBody(limited, 429);
    expect(Number(limited.headers.get("retry-after"))).toBeGreaterThanOrEqual(1);

    const asMember = await t.request("GET", "/api/v1/users/me", { token: member.token });
    expect(asMember.status).toBe(200);
    expect(asMember.headers.get("x-ratelimit-remaining")).toBe("4");
  });
});

describe("GET /api/v1/health", () => {
  test("reports status, version, database and uptime", async () => {
    const t = await newApp();
    const response = await t.request("GET", "/api/v1/health");
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      status: "ok",
      version: VERSION,
      database: "ok",
      store: TEST_STORE,
      uptime_seconds: 0,
    });
    expect(response.body.outbox).toMatchObject({ pending: 0, due: 0, oldest_pending_age_seconds: 0 });
  });

  inProcessTest("counts uptime from the start", async () => {
    const t = await newApp();
    t.clock.advanceSeconds(125);
    const later = await t.request("GET", "/api/v1/health");
    expect(later.body.uptime_seconds).toBe(125);
  });

  inProcessTest(
    "is 503, not 500, when the database is gone and a token is sent; secured routes say 503 too",
    async () => {
      const t = await newApp();
      const org = await t.createOrganization();
      expectServerErrors(503);
      t.close();
      const health = await t.request("GET", "/api/v1/health", { token: org.adminToken });
      expect(health.status).toBe(503);
      expect(health.headers.get("x-ratelimit-limit")).not.toBeNull();
      const users = await t.request("GET", "/api/v1/users", { token: org.adminToken });
      expectErrorBody(users, 503);
    },
  );

  inProcessTest("is 503 when the database cannot be reached", async () => {
    const t = await newApp();
    expectServerErrors(503);
    t.close();
    const response = await t.request("GET", "/api/v1/health");
    expect(response.status).toBe(503);
    expect(response.body).toMatchObject({ status: "degraded", database: "unreachable" });
  });
});

describe("request bodies", () => {
  test("fields no schema declares are refused by name instead of silently dropped", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const response = await t.request("PATCH", "/api/v1/organizations/current", {
      token: org.adminToken,
      body: { name: "Renamed", plna: "enterprise", sso: { oidc: { enabled: false, issuer_url: "x" } } },
    });
    expectErrorBody(response, 400);
    expect(response.body.errors.map((error: { field: string }) => error.field).sort()).toEqual([
      "plna",
      "sso.oidc.issuer_url",
    ]);
    const organization = await t.request("GET", "/api/v1/organizations/current", { token: org.adminToken });
    expect(organization.body.name).not.toBe("Renamed");
  });

  test("a body that is not JSON is a 415, malformed JSON a 400", async () => {
    const t = await newApp();
    const form = await t.request("POST", "/api/v1/auth/login", {
      rawBody: "email=a%40b.c&password=x",
      headers: { "content-type": "application/x-www-form-urlencoded" },
    });
    expectErrorBody(form, 415);
    const malformed = await t.request("POST", "/api/v1/auth/login", { rawBody: '{"email": "a@b.c",' });
    expectErrorBody(malformed, 400);
    expect(malformed.body.reason).toBe("invalid_json");
  });
});

describe("request body decoding", () => {
  test("inherited names such as constructor are still unknown fields", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const response = await t.request("PATCH", "/api/v1/organizations/current", {
      token: org.adminToken,
      rawBody: '{"name": "Renamed", "constructor": 1, "toString": 2}',
    });
    expectErrorBody(response, 400);
    expect(response.body.errors.map((error: { field: string }) => error.field).sort()).toEqual([
      "constructor",
      "toString",
    ]);
  });

  inProcessTest("invalid UTF-8 is a 400; a byte-order mark is accepted", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const invalid = await t.app.handle(
      new Request("http://localhost/api/v1/organizations/current", {
        method: "PATCH",
        headers: { authorization: `Bearer ${org.adminToken}`, "content-type": "application/json" },
        body: new Uint8Array([0x7b, 0x22, 0x6e, 0x61, 0x6d, 0x65, 0x22, 0x3a, 0x22, 0xff, 0xfe, 0x22, 0x7d]),
      }),
    );
    expect(invalid.status).toBe(400);
    expect(((await invalid.json()) as { details: string }).details).toContain("UTF-8");
    const withBom = await t.request("PATCH", "/api/v1/organizations/current", {
      token: org.adminToken,
      rawBody: '\uFEFF{"name": "With BOM"}',
    });
    expect(withBom.status).toBe(200);
    expect(withBom.body.name).toBe("With BOM");
  });
});
