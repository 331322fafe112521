import { afterAll, describe, expect, test } from "bun:test";
import { withTransaction } from "../../src/db/client";
import { recordEvent } from "../../src/domain/events/record-event";
import { createTestApp, inProcessTest } from "../helpers/test-app";

const SECRET = "route-test-secret-0123456";
const PUBLIC_URL = "https://93.184.215.14/hooks/bulwark";

const t = await createTestApp();
const permissive = await createTestApp({ webhooks: { allow_private_targets: true } });
afterAll(() => {
  t.close();
  permissive.close();
});

const org = await t.createOrganization();
const otherOrg = await t.createOrganization();
const operator = await t.createUser(org.adminToken, "operator");

async function createWebhook(body: Record<string, unknown> = {}, token = org.adminToken) {
  return t.request("POST", "/api/v1/webhooks", {
    token,
    body: { url: PUBLIC_URL, events: ["device.enrolled"], secret: SECRET, ...body },
  });
}

async function createdId(body: Record<string, unknown> = {}, token = org.adminToken): Promise<string> {
  const response = await createWebhook(body, token);
  expect(response.status).toBe(201);
  return response.body.id;
}

describe("POST /api/v1/webhooks", () => {
  test("creates a subscription (201) and never returns the secret", async () => {
    const response = await createWebhook({ events: ["device.enrolled", "policy.updated"] });
    expect(response.status).toBe(201);
    expect(response.body).toMatchObject({
      url: PUBLIC_URL,
      events: ["device.enrolled", "policy.updated"],
      active: true,
      disabled_reason: null,
      last_delivery: null,
    });
    expect(response.body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.body.created_at).toEndWith("Z");
    expect(JSON.stringify(response.body)).not.toContain(SECRET);
  });

  test('"*" subscribes to every event', async () => {
    const response = await createWebhook({ events: ["*", "device.enrolled"] });
    expect(response.status).toBe(201);
    expect(response.body.events).toEqual(["*"]);
  });

  test("an unknown event name is a 400 naming it", async () => {
    const response = await createWebhook({ events: ["device.enrolled", "device.exploded"] });
    expect(response.status).toBe(400);
    expect(response.body.errors[0]).toMatchObject({ field: "events.1", received: "device.exploded" });
    expect(response.body.details).toContain('unknown event "device.exploded"');
  });

  test.each([
    [{ events: [] }, "events"],
    [{ secret: "too-short-secret".slice(0, 15) }, "secret"],
    [{ secret: 1234567890123456 }, "secret"],
    [{ url: undefined }, "url"],
    [{ url: "ftp://93.184.215.14/hooks" }, "url"],
    [{ url: "not a url" }, "url"],
    [{ url: "https://user:password@93.184.215.14/" }, "url"],
  ])("bad input %p is a 400 naming %s", async (body, field) => {
    const response = await createWebhook(body);
    expect(response.status).toBe(400);
    expect(response.body.code).toBe(400);
    expect(response.body.errors.map((error: { field: string }) => error.field)).toContain(field);
  });

  test("a URL with credentials is refused without echoing them", async () => {
    const response = await createWebhook({ url: "https://hook-user:hook-password-1234@93.184.215.14/" });
    expect(response.status).toBe(400);
    expect(response.body.errors[0]).toMatchObject({ field: "url", received: "https://***@93.184.215.14/" });
    expect(JSON.stringify(response.body)).not.toContain("hook-password-1234");
  });

  test("malformed JSON is a 400", async () => {
    const response = await t.request("POST", "/api/v1/webhooks", { token: org.adminToken, rawBody: "{" });
    expect(response.status).toBe(400);
    expect(response.body.reason).toBe("invalid_json");
  });

  test.each([
    ["http://127.0.0.1:9000/hook", "loopback"],
    ["http://10.1.2.3/hook", "private"],
    ["http://192.168.1.10/hook", "private"],
    ["http://169.254.169.254/latest/meta-data/", "link_local"],
    ["http://[::1]:9000/hook", "loopback"],
    ["http://localhost:9000/hook", "loopback"],
  ])("refuses %s (%s) unless webhooks.allow_private_targets", async (url, kind) => {
    const refused = await createWebhook({ url });
    expect(refused.status).toBe(400);
    expect(refused.body.errors[0].field).toBe("url");
    expect(refused.body.errors[0].message).toContain(kind);
    expect(refused.body.errors[0].message).toContain("webhooks.allow_private_targets");

    const permissiveOrg = await permissive.createOrganization();
    const allowed = await permissive.request("POST", "/api/v1/webhooks", {
      token: permissiveOrg.adminToken,
      body: { url, events: ["*"], secret: SECRET },
    });
    expect(allowed.status).toBe(201);
    expect(allowed.body.url).toBe(url);
  });

  test("needs a token (401) and the admin scope (403 naming it)", async () => {
    const anonymous = await t.request("POST", "/api/v1/webhooks", {
      body: { url: PUBLIC_URL, events: ["*"], secret: SECRET },
    });
    expect(anonymous.status).toBe(401);
    const forbidden = await createWebhook({}, operator.token);
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.details).toContain("admin");
  });

  test("an API key with the admin scope may manage webhooks; one without it may not", async () => {
    const adminKey = await t.createApiKey(org.adminToken, ["admin"]);
    expect((await createWebhook({}, adminKey)).status).toBe(201);
    const readKey = await t.createApiKey(org.adminToken, ["devices:read", "audit:read"]);
    const refused = await t.request("GET", "/api/v1/webhooks", { token: readKey });
    expect(refused.status).toBe(403);
    expect(refused.body.details).toContain("admin");
  });

  test("is audited, without the secret", async () => {
    const id = await createdId();
    const audit = await t.request("GET", "/api/v1/audit-logs?action=webhook.create&page_size=100", {
      token: org.adminToken,
    });
    const entry = audit.body.data.find((row: { target: { id: string } }) => row.target.id === id);
    expect(entry).toMatchObject({
      actor: { label: org.adminEmail },
      details: { target: new URL(PUBLIC_URL).origin },
    });
    expect(JSON.stringify(entry)).not.toContain(new URL(PUBLIC_URL).pathname);
    expect(JSON.stringify(audit.body)).not.toContain(SECRET);
  });
});

describe("GET /api/v1/webhooks and /:id", () => {
  test("lists the organization's subscriptions, paginated, and gets one", async () => {
    const listOrg = await t.createOrganization();
    const ids = [];
    for (let index = 0; index < 3; index++) ids.push(await createdId({}, listOrg.adminToken));
    const firstPage = await t.request("GET", "/api/v1/webhooks?page_size=2", { token: listOrg.adminToken });
    expect(firstPage.status).toBe(200);
    expect(firstPage.body).toMatchObject({ total: 3, page: 1, page_size: 2, total_pages: 2 });
    expect(firstPage.body.data).toHaveLength(2);
    const secondPage = await t.request("GET", "/api/v1/webhooks?page=2&page_size=2", {
      token: listOrg.adminToken,
    });
    const listed = [...firstPage.body.data, ...secondPage.body.data].map((webhook) => webhook.id);
    expect(listed.sort()).toEqual([...ids].sort());
    expect(JSON.stringify(firstPage.body)).not.toContain(SECRET);

    const one = await t.request("GET", `/api/v1/webhooks/${ids[0]}`, { token: listOrg.adminToken });
    expect(one.status).toBe(200);
    expect(one.body).toMatchObject({ id: ids[0], url: PUBLIC_URL, last_delivery: null });
    expect(one.body.secret).toBeUndefined();
  });

  test("a bad page size is a 400 naming it", async () => {
    const response = await t.request("GET", "/api/v1/webhooks?page_size=101", { token: org.adminToken });
    expect(response.status).toBe(400);
    expect(JSON.stringify(response.body)).toContain("page_size");
  });

  test("another organization's subscription is 404 and not listed", async () => {
    const id = await createdId();
    const other = await t.request("GET", `/api/v1/webhooks/${id}`, { token: otherOrg.adminToken });
    expect(other.status).toBe(404);
    const list = await t.request("GET", "/api/v1/webhooks?page_size=100", { token: otherOrg.adminToken });
    expect(list.body.data.map((webhook: { id: string }) => webhook.id)).not.toContain(id);
  });

  test("an unknown id is 404, no token 401, wrong scope 403", async () => {
    expect((await t.request("GET", "/api/v1/webhooks/nope", { token: org.adminToken })).status).toBe(404);
    expect((await t.request("GET", "/api/v1/webhooks")).status).toBe(401);
    const forbidden = await t.request("GET", "/api/v1/webhooks", { token: operator.token });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.details).toContain("admin");
  });
});

describe("PATCH /api/v1/webhooks/:id", () => {
  test("changes url, events, secret and active; the secret is not returned", async () => {
    const id = await createdId();
    const newSecret = "a-brand-new-secret-value";
    const response = await t.request("PATCH", `/api/v1/webhooks/${id}`, {
      token: org.adminToken,
      body: {
        url: "https://93.184.215.15/new",
        events: ["policy.updated"],
        secret: newSecret,
        active: false,
      },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      id,
      url: "https://93.184.215.15/new",
      events: ["policy.updated"],
      active: false,
    });
    expect(JSON.stringify(response.body)).not.toContain(newSecret);
    const audit = await t.request("GET", "/api/v1/audit-logs?action=webhook.update", {
      token: org.adminToken,
    });
    const entry = audit.body.data.find((row: { target: { id: string } }) => row.target.id === id);
    expect(entry.details).toMatchObject({ secret_changed: true, active: false });
    expect(JSON.stringify(audit.body)).not.toContain(newSecret);
  });

  test("validates like creation: private url, unknown event, short secret, or nothing to change", async () => {
    const id = await createdId();
    const cases: [Record<string, unknown>, string][] = [
      [{ url: "http://10.0.0.8/hook" }, "url"],
      [{ events: ["nothing.happened"] }, "events.0"],
      [{ secret: "short" }, "secret"],
      [{ active: "yes" }, "active"],
    ];
    for (const [body, field] of cases) {
      const response = await t.request("PATCH", `/api/v1/webhooks/${id}`, { token: org.adminToken, body });
      expect(response.status).toBe(400);
      expect(JSON.stringify(response.body.errors)).toContain(field);
    }
    for (const body of [{}, { owner: "me" }]) {
      const nothingToChange = await t.request("PATCH", `/api/v1/webhooks/${id}`, {
        token: org.adminToken,
        body,
      });
      expect(nothingToChange.status).toBe(400);
    }
  });

  test("another organization's subscription is 404; no token 401; wrong scope 403", async () => {
    const id = await createdId();
    const body = { active: false };
    expect(
      (await t.request("PATCH", `/api/v1/webhooks/${id}`, { token: otherOrg.adminToken, body })).status,
    ).toBe(404);
    expect((await t.request("PATCH", `/api/v1/webhooks/${id}`, { body })).status).toBe(401);
    expect((await t.request("PATCH", `/api/v1/webhooks/${id}`, { token: operator.token, body })).status).toBe(
      403,
    );
    const unchanged = await t.request("GET", `/api/v1/webhooks/${id}`, { token: org.adminToken });
    expect(unchanged.body.active).toBe(true);
  });
});

describe("DELETE /api/v1/webhooks/:id", () => {
  inProcessTest("deletes (204) with its pending deliveries; then it is 404", async () => {
    const id = await createdId({ events: ["*"] });
    await withTransaction(
      t.deps.db,
      async (tx) =>
        await recordEvent(tx, t.clock.now(), org.organizationId, "policy.created", {
          policy_id: crypto.randomUUID(),
          name: "Recorded directly",
          version: 1,
        }),
    );
    const before = await t.request("GET", `/api/v1/webhooks/${id}/deliveries`, { token: org.adminToken });
    expect(before.body.total).toBe(1);

    const response = await t.request("DELETE", `/api/v1/webhooks/${id}`, { token: org.adminToken });
    expect(response.status).toBe(204);
    expect((await t.request("GET", `/api/v1/webhooks/${id}`, { token: org.adminToken })).status).toBe(404);
    const deliveries = await t.request("GET", `/api/v1/webhooks/${id}/deliveries`, { token: org.adminToken });
    expect(deliveries.status).toBe(404);
    const audit = await t.request("GET", "/api/v1/audit-logs?action=webhook.delete", {
      token: org.adminToken,
    });
    expect(audit.body.data.some((row: { target: { id: string } }) => row.target.id === id)).toBe(true);
  });

  test("another organization's subscription is 404; no token 401; wrong scope 403", async () => {
    const id = await createdId();
    expect((await t.request("DELETE", `/api/v1/webhooks/${id}`, { token: otherOrg.adminToken })).status).toBe(
      404,
    );
    expect((await t.request("DELETE", `/api/v1/webhooks/${id}`)).status).toBe(401);
    expect((await t.request("DELETE", `/api/v1/webhooks/${id}`, { token: operator.token })).status).toBe(403);
    expect((await t.request("GET", `/api/v1/webhooks/${id}`, { token: org.adminToken })).status).toBe(200);
  });
});

describe("POST /api/v1/webhooks/:id/test", () => {
  test("queues a webhook.test delivery (202) listed in the deliveries", async () => {
    const id = await createdId({ events: ["device.enrolled"] });
    const response = await t.request("POST", `/api/v1/webhooks/${id}/test`, { token: org.adminToken });
    expect(response.status).toBe(202);
    const deliveries = await t.request("GET", `/api/v1/webhooks/${id}/deliveries`, { token: org.adminToken });
    expect(deliveries.body.data).toEqual([
      expect.objectContaining({
        id: response.body.delivery_id,
        event_id: response.body.event_id,
        event: "webhook.test",
        status: "pending",
        attempts: 0,
        attempts_log: [],
      }),
    ]);
  });

  test("a disabled subscription is a 409", async () => {
    const id = await createdId();
    await t.request("PATCH", `/api/v1/webhooks/${id}`, { token: org.adminToken, body: { active: false } });
    const response = await t.request("POST", `/api/v1/webhooks/${id}/test`, { token: org.adminToken });
    expect(response.status).toBe(409);
  });

  test("another organization's subscription is 404; no token 401; wrong scope 403", async () => {
    const id = await createdId();
    const path = `/api/v1/webhooks/${id}/test`;
    expect((await t.request("POST", path, { token: otherOrg.adminToken })).status).toBe(404);
    expect((await t.request("POST", path)).status).toBe(401);
    expect((await t.request("POST", path, { token: operator.token })).status).toBe(403);
    const deliveries = await t.request("GET", `/api/v1/webhooks/${id}/deliveries`, { token: org.adminToken });
    expect(deliveries.body.total).toBe(0);
  });
});

describe("GET /api/v1/webhooks/:id/deliveries", () => {
  inProcessTest("paginates newest first and filters by status", async () => {
    const id = await createdId({ events: ["*"] });
    const recorded = [];
    for (const type of ["policy.created", "policy.updated", "policy.deleted"]) {
      recorded.push(
        await withTransaction(
          t.deps.db,
          async (tx) =>
            await recordEvent(
              tx,
              t.clock.now(),
              org.organizationId,
              type as "policy.created",
              { n: type } as never,
            ),
        ),
      );
    }
    const firstPage = await t.request("GET", `/api/v1/webhooks/${id}/deliveries?page_size=2`, {
      token: org.adminToken,
    });
    expect(firstPage.status).toBe(200);
    expect(firstPage.body).toMatchObject({ total: 3, page: 1, page_size: 2, total_pages: 2 });
    expect(firstPage.body.data.map((delivery: { event_id: string }) => delivery.event_id)).toEqual([
      recorded[2]?.id,
      recorded[1]?.id,
    ]);
    const pending = await t.request("GET", `/api/v1/webhooks/${id}/deliveries?status=pending`, {
      token: org.adminToken,
    });
    expect(pending.body.total).toBe(3);
    const succeeded = await t.request("GET", `/api/v1/webhooks/${id}/deliveries?status=succeeded`, {
      token: org.adminToken,
    });
    expect(succeeded.body.total).toBe(0);
  });

  test("an unknown status or a bad page is a 400 naming the parameter", async () => {
    const id = await createdId();
    const status = await t.request("GET", `/api/v1/webhooks/${id}/deliveries?status=lost`, {
      token: org.adminToken,
    });
    expect(status.status).toBe(400);
    expect(JSON.stringify(status.body)).toContain("status");
    const page = await t.request("GET", `/api/v1/webhooks/${id}/deliveries?page=0`, {
      token: org.adminToken,
    });
    expect(page.status).toBe(400);
    expect(JSON.stringify(page.body)).toContain("page");
  });

  test("another organization's subscription is 404; no token 401; wrong scope 403", async () => {
    const id = await createdId();
    const path = `/api/v1/webhooks/${id}/deliveries`;
    expect((await t.request("GET", path, { token: otherOrg.adminToken })).status).toBe(404);
    expect((await t.request("GET", path)).status).toBe(401);
    const forbidden = await t.request("GET", path, { token: operator.token });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.details).toContain("admin");
  });
});
