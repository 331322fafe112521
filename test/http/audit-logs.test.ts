import { describe, expect, test } from "bun:test";
import { freshTestApps, inProcessTest, TEST_PASSWORD, type TestApp } from "../helpers/test-app";

const AUDIT = "/api/v1/audit-logs";

interface AuditEntry {
  id: string;
  timestamp: string;
  actor: { type: string; id: string | null; label: string | null };
  action: string;
  target: { type: string | null; id: string | null };
  ip: string | null;
  outcome: "success" | "failure";
  details: Record<string, unknown> | null;
}

const newApp = freshTestApps({
  server: { trust_proxy: true },
  rate_limit: { unauthenticated_per_minute: 10_000 },
});

async function audit(t: TestApp, token: string, query = "") {
  const response = await t.request<{
    data: AuditEntry[];
    total: number;
    page: number;
    page_size: number;
    total_pages: number;
  }>("GET", `${AUDIT}${query}`, { token });
  expect(response.status).toBe(200);
  return response.body;
}

describe("what is recorded", () => {
  test("successful and failed sign-ins, with actor, outcome and address", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const member = await t.createUser(org.adminToken, "member");
    const headers = { "x-forwarded-for": "198.51.100.23" };

    await t.request("POST", "/api/v1/auth/login", {
      body: { email: member.email, password: "wrong" },
      headers,
    });
    await t.request("POST", "/api/v1/auth/login", {
      body: { email: member.email, password: TEST_PASSWORD },
      headers,
    });

    const { data } = await audit(t, org.adminToken, "?action=auth.login");
    const fromAddress = data.filter((entry) => entry.ip === "198.51.100.23");
    expect(fromAddress).toHaveLength(2);
    const [success, failure] = fromAddress; // newest first
    expect(success).toMatchObject({
      action: "auth.login",
      outcome: "success",
      actor: { type: "user", id: member.id, label: member.email },
      target: { type: "user", id: member.id },
    });
    expect(failure).toMatchObject({
      action: "auth.login",
      outcome: "failure",
      actor: { label: member.email },
      target: { type: "user", id: member.id },
    });
    expect(JSON.stringify(data)).not.toContain("wrong");
    expect(JSON.stringify(data)).not.toContain(TEST_PASSWORD);
  });

  test("behind a trusted proxy, the address is the right-most X-Forwarded-For entry that is not a trusted proxy, if it is an IP address", async () => {
    // The test's requests come from loopback, the proxy server.trust_proxy trusts by default.
    const t = await newApp();
    const org = await t.createOrganization();
    /** The address recorded for a failed sign-in (by a user of its own, so that no lockout interferes). */
    const recorded = async (forwardedFor?: string) => {
      const { email } = await t.createUser(org.adminToken, "member");
      const headers: Record<string, string> =
        forwardedFor === undefined ? {} : { "x-forwarded-for": forwardedFor };
      await t.request("POST", "/api/v1/auth/login", { body: { email, password: "x" }, headers });
      const { data } = await audit(t, org.adminToken, "?action=auth.login&outcome=failure&page_size=5");
      return data.find((entry) => entry.actor.label === email)?.ip;
    };
    const peer = await recorded();
    expect(peer).toMatch(/^(127\.0\.0\.1|::1)$/);
    expect(await recorded("198.51.100.7, 127.0.0.5")).toBe("198.51.100.7");
    expect(await recorded("2001:DB8:0:0:0:0:0:1")).toBe("2001:db8::1");
    expect(await recorded("::ffff:198.51.100.8")).toBe("198.51.100.8");
    expect(await recorded("not an address, 198.51.100.9")).toBe("198.51.100.9");
    for (const value of [
      "<img src=x onerror=alert(1)>",
      "198.51.100.7, <b>",
      "198.51.100.7,",
      "198.51.100.7:4711",
      "[2001:db8::1]",
      "fe80::1%eth0",
    ])
      expect({ value, ip: await recorded(value) }).toEqual({ value, ip: peer });
  }, 30_000);

  test("user.create, api_key.create and organization.update, with actor and target", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const member = await t.createUser(org.adminToken, "member");
    const key = await t.request("POST", "/api/v1/auth/api-keys", {
      token: org.adminToken,
      body: { name: "ci", scopes: ["users:read"] },
    });
    await t.request("PATCH", "/api/v1/organizations/current", {
      token: org.adminToken,
      body: { name: "Renamed" },
    });

    const actor = { type: "user", id: org.adminId, label: org.adminEmail };
    const [userCreate] = (await audit(t, org.adminToken, `?action=user.create&actor_id=${org.adminId}`)).data;
    expect(userCreate).toMatchObject({ actor, outcome: "success", target: { type: "user", id: member.id } });
    const [keyCreate] = (await audit(t, org.adminToken, "?action=api_key.create")).data;
    expect(keyCreate).toMatchObject({ actor, target: { type: "api_key", id: key.body.id } });
    expect(JSON.stringify(keyCreate)).not.toContain(key.body.key);
    const [orgUpdate] = (await audit(t, org.adminToken, "?action=organization.update")).data;
    expect(orgUpdate).toMatchObject({ actor, target: { type: "organization", id: org.organizationId } });
  });

  test("actions taken with an API key name the key as the actor", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const created = await t.request("POST", "/api/v1/auth/api-keys", {
      token: org.adminToken,
      body: { name: "provisioner", scopes: ["users:write"] },
    });
    const user = await t.request("POST", "/api/v1/users", {
      token: created.body.key,
      body: { email: "new@example.com", name: "New", role: "member", password: "a-long-enough-password" },
    });
    expect(user.status).toBe(201);

    const [entry] = (await audit(t, org.adminToken, "?action=user.create")).data;
    expect(entry?.actor.type).toBe("api_key");
    expect(entry?.actor.id).toBe(created.body.id);
    expect(entry?.actor.label).toContain("provisioner");
    expect(entry?.target.id).toBe(user.body.id);
  });
});

describe("GET /audit-logs", () => {
  inProcessTest("filters by action, actor_id, outcome, since and until", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const startedAt = t.clock.now().toISOString();
    t.clock.advanceSeconds(60);
    const member = await t.createUser(org.adminToken, "member");
    const middle = t.clock.now().toISOString();
    t.clock.advanceSeconds(60);
    await t.request("POST", "/api/v1/auth/login", { body: { email: member.email, password: "wrong" } });
    const lastAt = t.clock.now().toISOString();

    const byAction = await audit(t, org.adminToken, "?action=user.create");
    expect(byAction.data.length).toBeGreaterThan(0);
    expect(byAction.data.every((entry) => entry.action === "user.create")).toBe(true);

    const byActor = await audit(t, org.adminToken, `?actor_id=${member.id}`);
    expect(byActor.data.length).toBeGreaterThan(0);
    expect(byActor.data.every((entry) => entry.actor.id === member.id)).toBe(true);

    const failures = await audit(t, org.adminToken, "?outcome=failure");
    expect(failures.total).toBe(1);
    expect(failures.data[0]).toMatchObject({ action: "auth.login", outcome: "failure", timestamp: lastAt });
    const successes = await audit(t, org.adminToken, "?outcome=success");
    expect(successes.data.every((entry) => entry.outcome === "success")).toBe(true);

    const since = await audit(t, org.adminToken, `?since=${encodeURIComponent(middle)}`);
    expect(since.data.length).toBeGreaterThan(0);
    expect(since.data.every((entry) => entry.timestamp >= middle)).toBe(true);
    const until = await audit(t, org.adminToken, `?until=${encodeURIComponent(startedAt)}`);
    expect(until.data.length).toBeGreaterThan(0);
    expect(until.data.every((entry) => entry.timestamp <= startedAt)).toBe(true);
    const window = await audit(t, org.adminToken, `?since=${middle}&until=${middle}`);
    expect(window.data.map((entry) => entry.action).sort()).toEqual(["auth.login", "user.create"]);
    expect(since.total).toBe(window.total + 1);
  });

  inProcessTest("paginates newest first with total, page, page_size and total_pages", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    for (let index = 0; index < 4; index++) {
      t.clock.advanceSeconds(1);
      await t.request("PATCH", "/api/v1/organizations/current", {
        token: org.adminToken,
        body: { name: `Name ${index}` },
      });
    }

    const first = await audit(t, org.adminToken, "?action=organization.update&page_size=3");
    expect(first).toMatchObject({ total: 4, page: 1, page_size: 3, total_pages: 2 });
    expect(first.data).toHaveLength(3);
    const second = await audit(t, org.adminToken, "?action=organization.update&page_size=3&page=2");
    expect(second).toMatchObject({ total: 4, page: 2, page_size: 3, total_pages: 2 });
    expect(second.data).toHaveLength(1);
    const timestamps = [...first.data, ...second.data].map((entry) => entry.timestamp);
    expect(timestamps).toEqual([...timestamps].sort().reverse());
    const beyond = await audit(t, org.adminToken, "?action=organization.update&page_size=3&page=5");
    expect(beyond.data).toEqual([]);
  });

  test("an auditor may read the log; operators and members get 403 naming audit:read", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const auditor = await t.createUser(org.adminToken, "auditor");
    expect((await audit(t, auditor.token)).total).toBeGreaterThan(0);

    for (const role of ["operator", "member"] as const) {
      const user = await t.createUser(org.adminToken, role);
      const response = await t.request("GET", AUDIT, { token: user.token });
      expect(response.status).toBe(403);
      expect(response.body.code).toBe(403);
      expect(response.body.details).toContain("audit:read");
    }
    const key = await t.createApiKey(org.adminToken, ["users:read"]);
    expect((await t.request("GET", AUDIT, { token: key })).status).toBe(403);
  });

  test("another organization's entries are never visible", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const otherOrg = await t.createOrganization();
    const foreign = await t.createUser(otherOrg.adminToken, "member");
    await t.request("POST", "/api/v1/auth/login", { body: { email: foreign.email, password: "wrong" } });

    const all = await audit(t, org.adminToken, "?page_size=100");
    const mentioned = JSON.stringify(all.data);
    expect(mentioned).not.toContain(otherOrg.adminId);
    expect(mentioned).not.toContain(foreign.id);
    expect(mentioned).not.toContain(foreign.email);
    expect((await audit(t, org.adminToken, `?actor_id=${otherOrg.adminId}`)).total).toBe(0);
    expect((await audit(t, org.adminToken, "?outcome=failure")).total).toBe(0);
    expect((await audit(t, otherOrg.adminToken, `?actor_id=${otherOrg.adminId}`)).total).toBeGreaterThan(0);
  });

  test("bad filters are a 400 naming the parameter", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    for (const [query, field] of [
      ["since=yesterday", "since"],
      ["until=2026-13-45", "until"],
      ["outcome=maybe", "outcome"],
      ["page=0", "page"],
      ["page_size=1000", "page_size"],
      // An instant whose UTC form leaves the years 0000-9999 cannot be compared as text: refused as the
      // device log's filter refuses it.
      [`until=${encodeURIComponent("9999-12-31T23:59:59-05:00")}`, "until"],
    ]) {
      const response = await t.request("GET", `${AUDIT}?${query}`, { token: org.adminToken });
      expect(response.status).toBe(400);
      expect(response.body.code).toBe(400);
      expect(response.body.details).toContain(field);
    }
  });

  test("since and until are instants in any offset: an entry is found by a window written in another zone", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const all = await t.request("GET", `${AUDIT}?action=auth.login`, { token: org.adminToken });
    const at = new Date(all.body.data[0].timestamp);
    // The same instant written as local time in UTC+02:00.
    const local = new Date(at.getTime() + 2 * 3600_000).toISOString().replace("Z", "+02:00");
    const window = `since=${encodeURIComponent(local)}&until=${encodeURIComponent(local)}`;
    const found = await t.request("GET", `${AUDIT}?action=auth.login&${window}`, { token: org.adminToken });
    expect(found.status).toBe(200);
    expect(found.body.data.map((entry: { id: string }) => entry.id)).toContain(all.body.data[0].id);
  });

  test("without a token it is 401", async () => {
    const t = await newApp();
    const response = await t.request("GET", AUDIT);
    expect(response.status).toBe(401);
    expect(response.body.code).toBe(401);
  });
});
