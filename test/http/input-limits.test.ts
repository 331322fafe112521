/**
 * Input that once reached a 500, a silent success or Bun's development error page (issue 9), answered
 * now with a 400 (or 431) and the error body, in-process and from the executable alike.
 */
import { describe, expect, test } from "bun:test";
import { enrollDevice } from "../helpers/devices";
import { freshTestApps, TEST_TARGET, type TestResponse } from "../helpers/test-app";

const newApp = freshTestApps({ rate_limit: { unauthenticated_per_minute: 10_000 } });

const LIST_ENDPOINTS = [
  "/api/v1/devices",
  "/api/v1/policies",
  "/api/v1/users",
  "/api/v1/audit-logs",
  "/api/v1/enrollment-tokens",
  "/api/v1/webhooks",
  "/api/v1/auth/api-keys",
];

function expectBadRequest(response: TestResponse, field: string, message?: string) {
  expect(response.status, JSON.stringify(response.body)).toBe(400);
  expect(response.headers.get("content-type")).toContain("application/json");
  expect(response.body.code).toBe(400);
  const entry = response.body.errors?.find((error: { field: string }) => error.field === field);
  expect(entry, JSON.stringify(response.body)).toBeDefined();
  if (message) expect(entry.message).toBe(message);
}

const deep = (levels: number) => `${"[".repeat(levels)}${"]".repeat(levels)}`;

describe("integer query parameters", () => {
  test("out of range, not integers, or too large: 400 naming the parameter on every list endpoint", async () => {
    const t = await newApp();
    const { adminToken } = await t.createOrganization();
    const cases: [string, string, string][] = [
      ["page_size=101", "page_size", "must be at most 100"],
      ["page_size=0", "page_size", "must be at least 1"],
      ["page=0", "page", "must be at least 1"],
      ["page=abc", "page", "must be an integer"],
      ["page=1.5", "page", "must be an integer"],
      ["page=0x10", "page", "must be an integer"],
      ["page=99999999999999999999", "page", "must be at most 10000000"],
    ];
    for (const endpoint of LIST_ENDPOINTS) {
      for (const [query, field, message] of cases) {
        const response = await t.request("GET", `${endpoint}?${query}`, { token: adminToken });
        expectBadRequest(response, field, message);
      }
      const fine = await t.request("GET", `${endpoint}?page=2&page_size=5`, { token: adminToken });
      expect(fine.status, endpoint).toBe(200);
      expect(fine.body).toMatchObject({ page: 2, page_size: 5 });
    }
  });
});

describe("deeply nested JSON", () => {
  test("is refused before anything recurses into it, without signing in", async () => {
    const t = await newApp();
    const response = await t.request("POST", "/api/v1/auth/login", {
      rawBody: `{"email": ${deep(5000)}, "password": "x"}`,
    });
    expect(response.status).toBe(400);
    expect(response.body.details).toBe("the body nests objects and arrays more than 64 levels deep");
  });

  test("on the agent endpoint, 50,000 levels are a JSON 400, not an HTML error page", async () => {
    const t = await newApp();
    const { adminToken } = await t.createOrganization();
    const device = await enrollDevice(t, adminToken);
    const response = await t.request("POST", "/api/v1/agent/checkin", {
      token: device.device_token,
      rawBody: `{"facts": ${deep(50_000)}}`,
    });
    expect(response.status).toBe(400);
    expect(response.headers.get("content-type")).toContain("application/json");
    expect(response.body.code).toBe(400);
  });

  test("routes that take no body refuse it too, instead of crashing", async () => {
    const t = await newApp();
    const { adminToken } = await t.createOrganization();
    const member = await t.createUser(adminToken, "member");
    for (const path of [`/api/v1/users/${member.id}`, `/api/v1/webhooks/${crypto.randomUUID()}/test`]) {
      const method = path.endsWith("/test") ? "POST" : "DELETE";
      const response = await t.request(method, path, { token: adminToken, rawBody: `{"a": ${deep(5000)}}` });
      expect(response.status, path).toBe(400);
    }
    // Nothing was deleted.
    expect((await t.request("GET", `/api/v1/users/${member.id}`, { token: adminToken })).status).toBe(200);
  });

  test("64 levels are still accepted where a body allows them", async () => {
    const t = await newApp();
    const response = await t.request("POST", "/api/v1/auth/login", {
      rawBody: `{"email": "nobody@example.com", "password": "x", "extra": ${deep(63)}}`,
    });
    // Read and validated (the unknown field is named), not refused for its depth.
    expectBadRequest(response, "extra", "unknown field");
  });
});

describe("values of the wrong type", () => {
  test("a string where an object belongs is a 400, not a silent success", async () => {
    const t = await newApp();
    const { adminToken } = await t.createOrganization();
    const sso = await t.request("PATCH", "/api/v1/organizations/current", {
      token: adminToken,
      body: { sso: "hello" },
    });
    expectBadRequest(sso, "sso", "must be an object");
    const device = await enrollDevice(t, adminToken);
    const facts = await t.request("POST", "/api/v1/agent/checkin", {
      token: device.device_token,
      body: { facts: "hello" },
    });
    expectBadRequest(facts, "facts", "must be an object");
  });

  test("an unpaired surrogate is refused, not stored as U+FFFD while answered as sent", async () => {
    const t = await newApp();
    const { adminToken } = await t.createOrganization();
    const response = await t.request("POST", "/api/v1/policies", {
      token: adminToken,
      rawBody: '{"name": "Laptops \\ud800"}',
    });
    expectBadRequest(response, "name");
    const list = await t.request("GET", "/api/v1/policies", { token: adminToken });
    expect(list.body.data.map((policy: { name: string }) => policy.name)).not.toContain("Laptops \ufffd");
  });

  test("a NUL character in a body field, a field name, a path or a query parameter is a 400 naming it, on either store", async () => {
    // PostgreSQL's text cannot hold U+0000: the same request must not be a 404 on SQLite and a 500 there.
    const t = await newApp();
    const { adminToken } = await t.createOrganization();
    const device = await enrollDevice(t, adminToken);
    const inName = await t.request("POST", "/api/v1/policies", {
      token: adminToken,
      rawBody: '{"name": "Laptops \\u0000"}',
    });
    expectBadRequest(inName, "name");
    const inKey = await t.request("POST", "/api/v1/agent/checkin", {
      token: device.device_token,
      rawBody: '{"facts": {"disk_encrypted": true, "a\\u0000b": true}}',
    });
    expectBadRequest(inKey, "facts.a\u0000b");
    const inPath = await t.request("GET", "/api/v1/devices/%00", { token: adminToken });
    expectBadRequest(inPath, "id");
    const inQuery = await t.request("GET", "/api/v1/devices?q=ab%00", { token: adminToken });
    expectBadRequest(inQuery, "q");
    // Next to other reads at the same moment, each of those still gets its own answer.
    const together = await Promise.all([
      t.request("GET", `/api/v1/devices/${device.id}`, { token: adminToken }),
      t.request("GET", "/api/v1/devices/%00", { token: adminToken }),
      t.request("GET", `/api/v1/devices/${device.id}`, { token: adminToken }),
    ]);
    expect(together.map((answer) => answer.status)).toEqual([200, 400, 200]);
  });

  test("an id written in upper case finds the same policy instead of failing a foreign key", async () => {
    const t = await newApp();
    const { adminToken } = await t.createOrganization();
    const created = await t.request("POST", "/api/v1/policies", {
      token: adminToken,
      body: { name: "Kiosks" },
    });
    const updated = await t.request("PUT", `/api/v1/policies/${created.body.id.toUpperCase()}`, {
      token: adminToken,
      body: { description: "Locked down" },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({ id: created.body.id, version: 2, description: "Locked down" });
  });
});

describe("oversized headers", () => {
  // Behind HAProxy (deploy/haproxy-replicas.cfg), headers beyond its 32 KiB buffer never reach Bulwark:
  // HAProxy answers them with its own HTML 400, which no setting of HAProxy 2.6 replaces.
  const sizes = TEST_TARGET === "replicas" ? [24_000] : [24_000, 100_000];
  test.each(sizes)(
    "a bearer token of %d bytes is a JSON 431 with the request id and rate-limit headers",
    async (size) => {
      const t = await newApp();
      const response = await t.request("GET", "/api/v1/users/me", { token: "a".repeat(size) });
      expect(response.status).toBe(431);
      expect(response.body).toMatchObject({ code: 431, reason: "headers_too_large" });
      expect(response.headers.get("x-request-id")).toBe(response.body.request_id);
      expect(response.headers.get("x-ratelimit-limit")).toMatch(/^\d+$/);
    },
  );
});

describe("what errors echo", () => {
  test("a secret is never echoed back, and long values are cut to 200 characters", async () => {
    const t = await newApp();
    const { adminToken } = await t.createOrganization();
    const login = await t.request("POST", "/api/v1/auth/login", {
      body: { email: "not an email", password: 12345678901234 },
    });
    expect(login.status).toBe(400);
    const password = login.body.errors.find((error: { field: string }) => error.field === "password");
    expect(password).toBeDefined();
    expect(password).not.toHaveProperty("received");
    expect(JSON.stringify(login.body)).not.toContain("12345678901234");

    const name = "n".repeat(100_000);
    const long = await t.request("POST", "/api/v1/policies", { token: adminToken, body: { name } });
    expect(long.status).toBe(400);
    const received = long.body.errors.find((error: { field: string }) => error.field === "name").received;
    expect(received).toBe(`${"n".repeat(200)}…`);
    expect(JSON.stringify(long.body).length).toBeLessThan(2000);
  });
});

describe("caching", () => {
  test("answers carrying tokens or keys say Cache-Control: no-store", async () => {
    const t = await newApp();
    const { adminToken, adminEmail } = await t.createOrganization();
    const answers = [
      await t.request("POST", "/api/v1/auth/login", {
        body: { email: adminEmail, password: "correct-horse-battery" },
      }),
      await t.request("POST", "/api/v1/auth/api-keys", {
        token: adminToken,
        body: { name: "ci", scopes: ["devices:read"] },
      }),
      await t.request("POST", "/api/v1/enrollment-tokens", { token: adminToken, body: {} }),
    ];
    for (const answer of answers) {
      expect(answer.status).toBeLessThan(300);
      expect(answer.headers.get("cache-control")).toBe("no-store");
    }
  });
});

describe("the enrollment budget", () => {
  test("is per enrollment token, separate from the per-address budget that guards sign-in", async () => {
    const t = await newApp({ rate_limit: { unauthenticated_per_minute: 3, enrollments_per_minute: 5 } });
    const { adminToken } = await t.createOrganization();
    const token = await t.request("POST", "/api/v1/enrollment-tokens", {
      token: adminToken,
      body: { max_uses: null },
    });
    const enroll = () =>
      t.request("POST", "/api/v1/devices/enroll", {
        body: {
          enrollment_token: token.body.token,
          device_name: "Imaged laptop",
          platform: "windows",
          agent_version: "1.0.0",
          hardware_id: `HW-${crypto.randomUUID()}`,
        },
      });
    // An imaging station enrolls more laptops than the per-address budget allows...
    const statuses: number[] = [];
    for (let index = 0; index < 5; index++) {
      const response = await enroll();
      statuses.push(response.status);
      expect(response.headers.get("x-ratelimit-limit")).toBe("5");
    }
    expect(statuses).toEqual([201, 201, 201, 201, 201]);
    // ...up to the token's own budget.
    const sixth = await enroll();
    expect(sixth.status).toBe(429);
    expect(sixth.headers.get("retry-after")).toMatch(/^\d+$/);
    // A made-up token shares the per-address budget, like sign-in.
    const guesses: number[] = [];
    for (let index = 0; index < 4; index++) {
      const guess = await t.request("POST", "/api/v1/devices/enroll", {
        body: {
          enrollment_token: `guess-${index}`,
          device_name: "x",
          platform: "linux",
          agent_version: "1",
          hardware_id: "x",
        },
      });
      guesses.push(guess.status);
    }
    expect(guesses.slice(0, 2)).toEqual([401, 401]);
    expect(guesses.at(-1)).toBe(429);
  });
});
