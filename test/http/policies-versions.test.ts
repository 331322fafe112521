import { afterAll, describe, expect, test } from "bun:test";
import { and, asc, eq } from "drizzle-orm";
import { events } from "../../src/db/tables";
import { createTestApp, inProcessTest } from "../helpers/test-app";

const t = await createTestApp();
afterAll(() => t.close());

/** The outbox events of an organization of one type, oldest first. */
async function eventsOf(organizationId: string, type: string) {
  return (
    await t.deps.db
      .select({ data: events.data })
      .from(events)
      .where(and(eq(events.organizationId, organizationId), eq(events.type, type)))
      .orderBy(asc(events.sequence))
  ).map((event) => event.data);
}

async function createPolicy(token: string, body: Record<string, unknown>) {
  const response = await t.request("POST", "/api/v1/policies", { token, body });
  if (response.status !== 201) throw new Error(`create failed: ${JSON.stringify(response.body)}`);
  return response.body as { id: string; name: string; version: number };
}

describe("versions and history", () => {
  inProcessTest(
    "each change adds a version; history lists them newest first with who, when and what",
    async () => {
      const org = await t.createOrganization();
      const key = await t.createApiKey(org.adminToken, ["policies:write"]);
      const createdAt = t.clock.now().toISOString();
      const policy = await createPolicy(org.adminToken, { name: "Lab" });

      t.clock.advanceSeconds(60);
      const secondAt = t.clock.now().toISOString();
      const second = await t.request("PUT", `/api/v1/policies/${policy.id}`, {
        token: key,
        body: {
          policy_data: {
            dlp: { screenshot_allowed: false },
            network: { blocked_domains: ["pastebin.com", "evil.example.com"] },
          },
        },
      });
      expect(second.status).toBe(200);
      expect(second.body.version).toBe(2);

      t.clock.advanceSeconds(60);
      const thirdAt = t.clock.now().toISOString();
      const third = await t.request("PUT", `/api/v1/policies/${policy.id}`, {
        token: org.adminToken,
        body: { name: "Lab v3", policy_data: { storage: { max_file_size_mb: 5 } } },
      });
      expect(third.body.version).toBe(3);

      const history = await t.request("GET", `/api/v1/policies/${policy.id}/history`, {
        token: org.adminToken,
      });
      expect(history.status).toBe(200);
      expect(history.body).toMatchObject({ total: 3, page: 1, page_size: 20 });
      expect(history.body.data).toEqual([
        {
          version: 3,
          changed_by: org.adminEmail,
          changed_at: thirdAt,
          changes: ['name: "Lab" -> "Lab v3"', "storage.max_file_size_mb: 100 -> 5"],
        },
        {
          version: 2,
          changed_by: expect.stringContaining("key policies:write"),
          changed_at: secondAt,
          changes: [
            "dlp.screenshot_allowed: true -> false",
            'network.blocked_domains: added "evil.example.com"',
            'network.blocked_domains: removed "*.pastebin.com"',
            'network.blocked_domains: removed "transfer.sh"',
            'network.blocked_domains: removed "wetransfer.com"',
            'network.blocked_domains: removed "*.wetransfer.com"',
            'network.blocked_domains: removed "file.io"',
          ],
        },
        { version: 1, changed_by: org.adminEmail, changed_at: createdAt, changes: ["created"] },
      ]);

      const paged = await t.request("GET", `/api/v1/policies/${policy.id}/history?page=2&page_size=2`, {
        token: org.adminToken,
      });
      expect(paged.body.data.map((entry: { version: number }) => entry.version)).toEqual([1]);
      expect(paged.body.total).toBe(3);

      expect(await eventsOf(org.organizationId, "policy.updated")).toEqual([
        {
          policy_id: policy.id,
          name: "Lab",
          version: 2,
          changes: history.body.data[1].changes,
        },
        { policy_id: policy.id, name: "Lab v3", version: 3, changes: history.body.data[0].changes },
      ]);
    },
  );

  test("every version keeps its full document as it was written", async () => {
    const org = await t.createOrganization();
    const policy = await createPolicy(org.adminToken, { name: "Kept", description: "first" });
    await t.request("PUT", `/api/v1/policies/${policy.id}`, {
      token: org.adminToken,
      body: { description: "second", policy_data: { usb: { allowed: true, whitelist: ["046d:c52b"] } } },
    });
    const first = await t.request("GET", `/api/v1/policies/${policy.id}/versions/1`, {
      token: org.adminToken,
    });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      policy_id: policy.id,
      version: 1,
      name: "Kept",
      description: "first",
      changes: ["created"],
      changed_by: org.adminEmail,
    });
    expect(first.body.policy_data.usb).toMatchObject({ allowed: false, whitelist: [] });
    const second = await t.request("GET", `/api/v1/policies/${policy.id}/versions/2`, {
      token: org.adminToken,
    });
    expect(second.body).toMatchObject({ version: 2, description: "second" });
    expect(second.body.policy_data.usb).toMatchObject({ allowed: true, whitelist: ["046d:c52b"] });
    expect(second.body.changes).toEqual([
      'description: "first" -> "second"',
      "usb.allowed: false -> true",
      'usb.whitelist: added "046d:c52b"',
    ]);
    const current = await t.request("GET", `/api/v1/policies/${policy.id}`, { token: org.adminToken });
    expect(current.body.policy_data).toEqual(second.body.policy_data);
  });

  test("an unknown version is 404; a version that is not a positive integer is 400", async () => {
    const org = await t.createOrganization();
    const policy = await createPolicy(org.adminToken, { name: "One version" });
    const missing = await t.request("GET", `/api/v1/policies/${policy.id}/versions/2`, {
      token: org.adminToken,
    });
    expect(missing.status).toBe(404);
    expect(missing.body.reason).toBe("policy_version_not_found");
    for (const version of ["0", "-1", "1.5", "abc"]) {
      const response = await t.request("GET", `/api/v1/policies/${policy.id}/versions/${version}`, {
        token: org.adminToken,
      });
      expect(response.status).toBe(400);
      expect(response.body.errors).toEqual([
        { field: "version", message: "must be a positive integer", received: version },
      ]);
    }
  });

  inProcessTest("a PUT that changes nothing keeps the version and records nothing", async () => {
    const org = await t.createOrganization();
    const policy = await createPolicy(org.adminToken, {
      name: "Stable",
      policy_data: { dlp: { print_allowed: false } },
    });
    const before = await t.request("GET", `/api/v1/policies/${policy.id}`, { token: org.adminToken });
    t.clock.advanceSeconds(60);
    const same = await t.request("PUT", `/api/v1/policies/${policy.id}`, {
      token: org.adminToken,
      body: { name: "Stable", description: "", policy_data: { dlp: { print_allowed: false } } },
    });
    expect(same.status).toBe(200);
    expect(same.body).toEqual(before.body);
    const history = await t.request("GET", `/api/v1/policies/${policy.id}/history`, {
      token: org.adminToken,
    });
    expect(history.body.total).toBe(1);
    expect(await eventsOf(org.organizationId, "policy.updated")).toEqual([]);
  });

  test("policy_data is merged over the current version, not over the defaults", async () => {
    const org = await t.createOrganization();
    const policy = await createPolicy(org.adminToken, {
      name: "Merged",
      policy_data: { usb: { allowed: true }, network: { allowed_domains: ["example.com"] } },
    });
    const updated = await t.request("PUT", `/api/v1/policies/${policy.id}`, {
      token: org.adminToken,
      body: { policy_data: { dlp: { screenshot_allowed: false } } },
    });
    expect(updated.body.policy_data.usb.allowed).toBe(true);
    expect(updated.body.policy_data.network.allowed_domains).toEqual(["example.com"]);
    expect(updated.body.policy_data.dlp.screenshot_allowed).toBe(false);
  });
});

describe("expected_version", () => {
  test("an edit based on an old version is 409 and changes nothing", async () => {
    const org = await t.createOrganization();
    const policy = await createPolicy(org.adminToken, { name: "Contested" });
    const first = await t.request("PUT", `/api/v1/policies/${policy.id}`, {
      token: org.adminToken,
      body: { expected_version: 1, policy_data: { dlp: { print_allowed: false } } },
    });
    expect(first.status).toBe(200);
    expect(first.body.version).toBe(2);
    const stale = await t.request("PUT", `/api/v1/policies/${policy.id}`, {
      token: org.adminToken,
      body: { expected_version: 1, policy_data: { dlp: { screenshot_allowed: false } } },
    });
    expect(stale.status).toBe(409);
    expect(stale.body.details).toBe("expected_version is 1 but the current version is 2");
    const current = await t.request("GET", `/api/v1/policies/${policy.id}`, { token: org.adminToken });
    expect(current.body.version).toBe(2);
    expect(current.body.policy_data.dlp).toMatchObject({ print_allowed: false, screenshot_allowed: true });
  });

  test("expected_version must be a positive integer", async () => {
    const org = await t.createOrganization();
    const policy = await createPolicy(org.adminToken, { name: "Typed" });
    const response = await t.request("PUT", `/api/v1/policies/${policy.id}`, {
      token: org.adminToken,
      body: { expected_version: "1", name: "x" },
    });
    expect(response.status).toBe(400);
    expect(response.body.errors[0].field).toBe("expected_version");
  });
});

describe("events and audit", () => {
  inProcessTest("create, update and delete emit their events and write audit entries", async () => {
    const org = await t.createOrganization();
    const policy = await createPolicy(org.adminToken, { name: "Audited" });
    t.clock.advanceSeconds(1);
    await t.request("PUT", `/api/v1/policies/${policy.id}`, {
      token: org.adminToken,
      body: { policy_data: { usb: { audit_only: true } } },
    });
    const defaultPolicy = await t.request("GET", "/api/v1/policies/default", { token: org.adminToken });
    t.clock.advanceSeconds(1);
    await t.request("DELETE", `/api/v1/policies/${policy.id}`, { token: org.adminToken });

    expect(await eventsOf(org.organizationId, "policy.created")).toEqual([
      { policy_id: policy.id, name: "Audited", version: 1 },
    ]);
    expect(await eventsOf(org.organizationId, "policy.deleted")).toEqual([
      { policy_id: policy.id, name: "Audited", affected_devices: 0, fallback_policy: defaultPolicy.body.id },
    ]);
    const audit = await t.request("GET", "/api/v1/audit-logs", { token: org.adminToken });
    const entries = audit.body.data.filter(
      (entry: { target: { id: string } }) => entry.target.id === policy.id,
    );
    expect(
      entries.map((entry: { action: string; actor: { label: string } }) => [entry.action, entry.actor.label]),
    ).toEqual([
      ["policy.delete", org.adminEmail],
      ["policy.update", org.adminEmail],
      ["policy.create", org.adminEmail],
    ]);
    expect(entries[1].details).toEqual({ version: 2, changes: ["usb.audit_only: false -> true"] });
  });
});
