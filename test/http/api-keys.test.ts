import { describe, expect, test } from "bun:test";
import { freshTestApps, inProcessTest, type TestApp } from "../helpers/test-app";

const KEYS = "/api/v1/auth/api-keys";
const DAY_MS = 86_400_000;

const newApp = freshTestApps({ rate_limit: { unauthenticated_per_minute: 10_000 } });

function createKey(t: TestApp, token: string, body: Record<string, unknown>) {
  return t.request("POST", KEYS, { token, body });
}

describe("POST /auth/api-keys", () => {
  inProcessTest("creates a key that is returned once, with a 90-day default lifetime", async () => {
    const t = await newApp();
    const org = await t.createOrganization();

    const response = await createKey(t, org.adminToken, { name: "ci", scopes: ["devices:read"] });

    expect(response.status).toBe(201);
    expect(response.body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.body.name).toBe("ci");
    expect(response.body.scopes).toEqual(["devices:read"]);
    expect(response.body.created_at).toBe(t.clock.now().toISOString());
    expect(new Date(response.body.expires_at).getTime()).toBe(t.clock.now().getTime() + 90 * DAY_MS);
    // bwk_ + at least 128 bits of base64url randomness (22 characters).
    expect(response.body.key).toMatch(/^bwk_[A-Za-z0-9_-]{22,}$/);

    const second = await createKey(t, org.adminToken, { name: "ci", scopes: ["devices:read"] });
    expect(second.body.key).not.toBe(response.body.key);
  });

  inProcessTest("expires_in_days sets the lifetime", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const response = await createKey(t, org.adminToken, {
      name: "short",
      scopes: ["users:read"],
      expires_in_days: 7,
    });
    expect(response.status).toBe(201);
    expect(new Date(response.body.expires_at).getTime()).toBe(t.clock.now().getTime() + 7 * DAY_MS);
  });

  test("the key works as a Bearer token and as X-API-Key", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const key = await t.createApiKey(org.adminToken, ["users:read"]);

    const asBearer = await t.request("GET", "/api/v1/users", { token: key });
    expect(asBearer.status).toBe(200);
    expect(asBearer.body.data.map((user: { id: string }) => user.id)).toContain(org.adminId);

    const asHeader = await t.request("GET", "/api/v1/users", { headers: { "x-api-key": key } });
    expect(asHeader.status).toBe(200);
  });

  test("scopes wider than the creator's are refused with 403 naming the scope", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const operator = await t.createUser(org.adminToken, "operator");

    for (const scope of ["admin", "audit:read", "users:write"]) {
      const response = await createKey(t, operator.token, {
        name: "too wide",
        scopes: ["devices:read", scope],
      });
      expect(response.status).toBe(403);
      expect(response.body.code).toBe(403);
      expect(response.body.details).toContain(scope);
    }
    const allowed = await createKey(t, operator.token, {
      name: "fine",
      scopes: ["devices:read", "users:read"],
    });
    expect(allowed.status).toBe(201);
  });

  test("a member, who has no scopes, cannot create a key with any", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const member = await t.createUser(org.adminToken, "member");
    const response = await createKey(t, member.token, { name: "nope", scopes: ["devices:read"] });
    expect(response.status).toBe(403);
    expect(response.body.details).toContain("devices:read");
  });

  test("an API key can neither mint keys (which would outlive it) nor revoke its owner's keys", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const key = await t.createApiKey(org.adminToken, ["admin"]);
    const minted = await createKey(t, key, { name: "child", scopes: ["devices:read"] });
    expect(minted.status).toBe(403);
    expect(minted.body.reason).toBe("api_key_not_allowed");

    const other = await createKey(t, org.adminToken, { name: "other", scopes: ["devices:read"] });
    const revoked = await t.request("DELETE", `/api/v1/auth/api-keys/${other.body.id}`, { token: key });
    expect(revoked.status).toBe(403);
    expect((await t.request("GET", "/api/v1/devices", { token: other.body.key })).status).toBe(200);
  });

  test("an unknown scope is a 400 naming it and listing the scopes there are", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const response = await createKey(t, org.adminToken, { name: "x", scopes: ["devices:read", "root"] });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe(400);
    expect(response.body.errors).toEqual([
      {
        field: "scopes.1",
        message:
          "must be one of devices:read, devices:write, policies:read, policies:write, users:read, users:write, audit:read, vpn:read, vpn:report, admin",
        received: "root",
      },
    ]);
    expect(response.body.details).toContain("scopes.1: must be one of devices:read");
  });

  test("bad input is a 400 naming the field", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const cases: [Record<string, unknown>, string][] = [
      [{ scopes: ["devices:read"] }, "name"],
      [{ name: "", scopes: ["devices:read"] }, "name"],
      [{ name: "x" }, "scopes"],
      [{ name: "x", scopes: [] }, "scopes"],
      [{ name: "x", scopes: "devices:read" }, "scopes"],
      [{ name: "x", scopes: ["devices:read"], expires_in_days: 0 }, "expires_in_days"],
      [{ name: "x", scopes: ["devices:read"], expires_in_days: 1.5 }, "expires_in_days"],
    ];
    for (const [body, field] of cases) {
      const response = await createKey(t, org.adminToken, body);
      expect(response.status).toBe(400);
      expect(response.body.details).toContain(field);
    }
    const malformed = await t.request("POST", KEYS, { token: org.adminToken, rawBody: "{" });
    expect(malformed.status).toBe(400);
    expect(malformed.body.reason).toBe("invalid_json");
  });

  test("without a token it is 401", async () => {
    const t = await newApp();
    const response = await t.request("POST", KEYS, { body: { name: "x", scopes: ["devices:read"] } });
    expect(response.status).toBe(401);
    expect(response.body.code).toBe(401);
  });
});

describe("using API keys", () => {
  test("a key's scopes limit what it may do: 403 naming the missing scope", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const key = await t.createApiKey(org.adminToken, ["devices:read"]);

    const response = await t.request("GET", "/api/v1/users", { token: key });
    expect(response.status).toBe(403);
    expect(response.body.code).toBe(403);
    expect(response.body.details).toContain("users:read");
  });

  test("a key loses scopes its creator no longer has", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const operator = await t.createUser(org.adminToken, "operator");
    const key = await t.createApiKey(operator.token, ["users:read"]);
    expect((await t.request("GET", "/api/v1/users", { token: key })).status).toBe(200);

    await t.request("PATCH", `/api/v1/users/${operator.id}`, {
      token: org.adminToken,
      body: { role: "member" },
    });

    expect((await t.request("GET", "/api/v1/users", { token: key })).status).toBe(403);
  });

  inProcessTest("an expired key is refused", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const created = await createKey(t, org.adminToken, {
      name: "week",
      scopes: ["users:read"],
      expires_in_days: 7,
    });
    t.clock.advanceSeconds(7 * 86400 - 1);
    expect((await t.request("GET", "/api/v1/users", { token: created.body.key })).status).toBe(200);

    t.clock.advanceSeconds(1);
    const response = await t.request("GET", "/api/v1/users", { token: created.body.key });
    expect(response.status).toBe(401);
    expect(response.body.code).toBe(401);
  });

  test("a key of a deleted user stops working", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const operator = await t.createUser(org.adminToken, "operator");
    const key = await t.createApiKey(operator.token, ["users:read"]);
    await t.request("DELETE", `/api/v1/users/${operator.id}`, { token: org.adminToken });
    expect((await t.request("GET", "/api/v1/users", { token: key })).status).toBe(401);
  });

  test("an unknown key is 401", async () => {
    const t = await newApp();
    const response = await t.request("GET", "/api/v1/users", { headers: { "x-api-key": "bwk_unknown" } });
    expect(response.status).toBe(401);
  });
});

describe("GET /auth/api-keys", () => {
  inProcessTest("lists keys without the key value, and records when each was last used", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const created = await createKey(t, org.adminToken, { name: "automation", scopes: ["users:read"] });

    const before = await t.request("GET", KEYS, { token: org.adminToken });
    expect(before.status).toBe(200);
    expect(before.body.total).toBe(1);
    const [listed] = before.body.data;
    expect(listed.id).toBe(created.body.id);
    expect(listed.name).toBe("automation");
    expect(listed.scopes).toEqual(["users:read"]);
    expect(listed.expires_at).toBe(created.body.expires_at);
    expect(listed.last_used_at).toBeNull();
    expect(listed).not.toHaveProperty("key");
    expect(JSON.stringify(before.body)).not.toContain(created.body.key);

    t.clock.advanceSeconds(30);
    await t.request("GET", "/api/v1/users", { token: created.body.key });

    const after = await t.request("GET", KEYS, { token: org.adminToken });
    expect(after.body.data[0].last_used_at).toBe(t.clock.now().toISOString());
    expect(JSON.stringify(after.body)).not.toContain(created.body.key);
  });

  test("a non-admin sees only their own keys; another organization's keys never appear", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const otherOrg = await t.createOrganization();
    const operator = await t.createUser(org.adminToken, "operator");
    const adminKey = await createKey(t, org.adminToken, { name: "admin's", scopes: ["users:read"] });
    const operatorKey = await createKey(t, operator.token, { name: "operator's", scopes: ["users:read"] });
    const foreignKey = await createKey(t, otherOrg.adminToken, { name: "foreign", scopes: ["users:read"] });

    const asOperator = await t.request("GET", KEYS, { token: operator.token });
    expect(asOperator.body.data.map((key: { id: string }) => key.id)).toEqual([operatorKey.body.id]);

    const asAdmin = await t.request("GET", KEYS, { token: org.adminToken });
    const ids = asAdmin.body.data.map((key: { id: string }) => key.id);
    expect(ids).toContain(adminKey.body.id);
    expect(ids).toContain(operatorKey.body.id);
    expect(ids).not.toContain(foreignKey.body.id);
  });

  test("bad paging is a 400 naming the parameter; no token is 401", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const response = await t.request("GET", `${KEYS}?page_size=0`, { token: org.adminToken });
    expect(response.status).toBe(400);
    expect(response.body.details).toContain("page_size");
    expect((await t.request("GET", KEYS)).status).toBe(401);
  });
});

describe("DELETE /auth/api-keys/:id", () => {
  inProcessTest("revokes the key: 204, then the key is refused", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const created = await createKey(t, org.adminToken, { name: "temp", scopes: ["users:read"] });
    expect((await t.request("GET", "/api/v1/users", { token: created.body.key })).status).toBe(200);

    const response = await t.request("DELETE", `${KEYS}/${created.body.id}`, { token: org.adminToken });
    expect(response.status).toBe(204);
    expect(response.body).toBeNull();

    expect((await t.request("GET", "/api/v1/users", { token: created.body.key })).status).toBe(401);
    expect(
      (await t.request("GET", "/api/v1/users", { headers: { "x-api-key": created.body.key } })).status,
    ).toBe(401);
    const listed = await t.request("GET", KEYS, { token: org.adminToken });
    expect(listed.body.data[0].revoked_at).toBe(t.clock.now().toISOString());
  });

  test("another organization's key is 404 and keeps working", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const otherOrg = await t.createOrganization();
    const foreign = await createKey(t, otherOrg.adminToken, { name: "foreign", scopes: ["users:read"] });

    const response = await t.request("DELETE", `${KEYS}/${foreign.body.id}`, { token: org.adminToken });
    expect(response.status).toBe(404);
    expect(response.body.code).toBe(404);
    expect((await t.request("GET", "/api/v1/users", { token: foreign.body.key })).status).toBe(200);
  });

  test("a non-admin cannot revoke a colleague's key (404)", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const operator = await t.createUser(org.adminToken, "operator");
    const adminKey = await createKey(t, org.adminToken, { name: "admin's", scopes: ["users:read"] });

    const response = await t.request("DELETE", `${KEYS}/${adminKey.body.id}`, { token: operator.token });
    expect(response.status).toBe(404);
    expect((await t.request("GET", "/api/v1/users", { token: adminKey.body.key })).status).toBe(200);
  });

  test("an unknown id is 404; no token is 401", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const unknown = await t.request("DELETE", `${KEYS}/${crypto.randomUUID()}`, { token: org.adminToken });
    expect(unknown.status).toBe(404);
    const created = await createKey(t, org.adminToken, { name: "x", scopes: ["users:read"] });
    expect((await t.request("DELETE", `${KEYS}/${created.body.id}`)).status).toBe(401);
    expect((await t.request("GET", "/api/v1/users", { token: created.body.key })).status).toBe(200);
  });
});
