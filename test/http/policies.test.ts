import { afterAll, describe, expect, test } from "bun:test";
import { findPolicyTemplate } from "../../src/domain/policies/policy-templates";
import { createTestApp, inProcessTest } from "../helpers/test-app";

const t = await createTestApp();
afterAll(() => t.close());

const BALANCED = findPolicyTemplate("balanced")?.policy_data;

async function createPolicy(token: string, body: Record<string, unknown>) {
  const response = await t.request("POST", "/api/v1/policies", { token, body });
  if (response.status !== 201) throw new Error(`create failed: ${JSON.stringify(response.body)}`);
  return response.body as { id: string; name: string; version: number };
}

describe("the organization default policy", () => {
  test("every new organization starts with one: Default policy, balanced, version 1", async () => {
    const org = await t.createOrganization();
    const list = await t.request("GET", "/api/v1/policies", { token: org.adminToken });
    expect(list.status).toBe(200);
    expect(list.body.total).toBe(1);
    expect(list.body.data[0]).toMatchObject({
      name: "Default policy",
      version: 1,
      active: true,
      device_count: 0,
      is_default: true,
    });
    const policy = await t.request("GET", `/api/v1/policies/${list.body.data[0].id}`, {
      token: org.adminToken,
    });
    expect(policy.body.policy_data).toEqual(BALANCED);
    expect(policy.body.organization_id).toBe(org.organizationId);
  });
});

describe("POST /api/v1/policies", () => {
  inProcessTest(
    "creates version 1, active, without devices; omitted settings take the balanced defaults",
    async () => {
      const org = await t.createOrganization();
      const created = await t.request("POST", "/api/v1/policies", {
        token: org.adminToken,
        body: {
          name: "Finance laptops",
          description: "No screenshots",
          policy_data: { dlp: { screenshot_allowed: false }, storage: { max_file_size_mb: 25 } },
        },
      });
      expect(created.status).toBe(201);
      expect(created.body).toMatchObject({
        name: "Finance laptops",
        description: "No screenshots",
        version: 1,
        active: true,
        device_count: 0,
        is_default: false,
        organization_id: org.organizationId,
        created_at: t.clock.now().toISOString(),
      });
      expect(created.body.id).toMatch(/^[0-9a-f-]{36}$/);
      expect(created.body.policy_data).toEqual({
        ...BALANCED,
        dlp: { ...BALANCED?.dlp, screenshot_allowed: false },
        storage: { ...BALANCED?.storage, max_file_size_mb: 25 },
      });
      const fetched = await t.request("GET", `/api/v1/policies/${created.body.id}`, {
        token: org.adminToken,
      });
      expect(fetched.body).toEqual(created.body);
    },
  );

  test("a name alone is enough: the document is the balanced template's", async () => {
    const org = await t.createOrganization();
    const created = await t.request("POST", "/api/v1/policies", {
      token: org.adminToken,
      body: { name: "Plain" },
    });
    expect(created.status).toBe(201);
    expect(created.body.policy_data).toEqual(BALANCED);
    expect(created.body.description).toBe("");
  });

  test("name is required and 1 to 200 characters; description at most 2000", async () => {
    const org = await t.createOrganization();
    const cases: [Record<string, unknown>, string, string][] = [
      [{}, "name", "is required"],
      [{ name: "" }, "name", "must not be empty"],
      [{ name: "x".repeat(201) }, "name", "must be at most 200 characters"],
      [{ name: 42 }, "name", "must be a string"],
      [{ name: "ok", description: "x".repeat(2001) }, "description", "must be at most 2000 characters"],
    ];
    for (const [body, field, message] of cases) {
      const response = await t.request("POST", "/api/v1/policies", { token: org.adminToken, body });
      expect(response.status).toBe(400);
      expect(response.body.errors).toContainEqual(expect.objectContaining({ field, message }));
    }
    const list = await t.request("GET", "/api/v1/policies", { token: org.adminToken });
    expect(list.body.total).toBe(1);
  });

  test("a whitespace-only name is 400 naming name, on create, from-template and update; names are trimmed", async () => {
    const org = await t.createOrganization();
    const token = org.adminToken;
    for (const [method, path, body] of [
      ["POST", "/api/v1/policies", { name: "   " }],
      ["POST", "/api/v1/policies/from-template", { template_id: "strict", name: " \t " }],
    ] as const) {
      const response = await t.request(method, path, { token, body });
      expect(response.status, path).toBe(400);
      expect(response.body.errors).toEqual([
        expect.objectContaining({
          field: "name",
          message: "must be a name of printable characters, not blank",
        }),
      ]);
    }
    const created = await createPolicy(token, { name: "  Finance  " });
    expect(created.name).toBe("Finance");
    const blankRename = await t.request("PUT", `/api/v1/policies/${created.id}`, {
      token,
      body: { name: "  " },
    });
    expect(blankRename.status).toBe(400);
    expect(blankRename.body.errors).toEqual([
      expect.objectContaining({
        field: "name",
        message: "must be a name of printable characters, not blank",
      }),
    ]);
    // " Finance" is the same name once trimmed.
    const twin = await t.request("POST", "/api/v1/policies", { token, body: { name: " Finance" } });
    expect(twin.status).toBe(409);
    const list = await t.request("GET", "/api/v1/policies", { token });
    expect(list.body.total).toBe(2);
  });

  test("malformed JSON is 400 invalid request body", async () => {
    const org = await t.createOrganization();
    const response = await t.request("POST", "/api/v1/policies", { token: org.adminToken, rawBody: "{" });
    expect(response.status).toBe(400);
    expect(response.body.reason).toBe("invalid_json");
  });

  test("a name already used in the organization is 409; another organization may use it", async () => {
    const first = await t.createOrganization();
    const second = await t.createOrganization();
    await createPolicy(first.adminToken, { name: "Contractors" });
    const duplicate = await t.request("POST", "/api/v1/policies", {
      token: first.adminToken,
      body: { name: "Contractors" },
    });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.reason).toBe("policy_name_taken");
    const elsewhere = await t.request("POST", "/api/v1/policies", {
      token: second.adminToken,
      body: { name: "Contractors" },
    });
    expect(elsewhere.status).toBe(201);
  });

  test("names ignore case, in any script: a name differing only in case is 409 on create, from-template and rename", async () => {
    const org = await t.createOrganization();
    const finance = await createPolicy(org.adminToken, { name: "Finance laptops" });
    const post = (path: string, body: unknown) => t.request("POST", path, { token: org.adminToken, body });
    for (const [path, body] of [
      ["/api/v1/policies", { name: "finance laptops" }],
      ["/api/v1/policies", { name: "  FINANCE LAPTOPS " }],
      ["/api/v1/policies/from-template", { template_id: "strict", name: "Finance Laptops" }],
    ] as const) {
      const duplicate = await post(path, body);
      expect(duplicate.status).toBe(409);
      expect(duplicate.body.reason).toBe("policy_name_taken");
      expect(duplicate.body.details).toContain('policy "Finance laptops" differs only in case');
    }
    await createPolicy(org.adminToken, { name: "Ärzte" });
    expect((await post("/api/v1/policies", { name: "ärzte" })).status).toBe(409);
    // Names a person cannot tell apart are one: a no-break space, a zero-width space, doubled spaces,
    // é written as one letter or as e with a combining accent.
    for (const name of ["Finance\u00a0Laptops", "Finance\u200b laptops", "Finance   Laptops"])
      expect((await post("/api/v1/policies", { name })).status).toBe(409);
    // A tab is no printable character.
    expect((await post("/api/v1/policies", { name: "Finance\tLaptops" })).status).toBe(400);
    await createPolicy(org.adminToken, { name: "Caf\u00e9 kiosks" });
    expect((await post("/api/v1/policies", { name: "CAFE\u0301 KIOSKS" })).status).toBe(409);

    const other = await createPolicy(org.adminToken, { name: "Contractors" });
    const rename = await t.request("PUT", `/api/v1/policies/${other.id}`, {
      token: org.adminToken,
      body: { name: "FINANCE laptops" },
    });
    expect(rename.status).toBe(409);
    // A policy may change the case of its own name.
    const recased = await t.request("PUT", `/api/v1/policies/${finance.id}`, {
      token: org.adminToken,
      body: { name: "Finance Laptops" },
    });
    expect(recased.status).toBe(200);
    expect(recased.body.name).toBe("Finance Laptops");
  });
});

describe("GET /api/v1/policies", () => {
  inProcessTest("pages newest first with page, page_size and total; no documents in list items", async () => {
    const org = await t.createOrganization();
    for (const name of ["First", "Second", "Third"]) {
      t.clock.advanceSeconds(60);
      await createPolicy(org.adminToken, { name });
    }
    const page = await t.request("GET", "/api/v1/policies?page=1&page_size=2", { token: org.adminToken });
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ total: 4, page: 1, page_size: 2, total_pages: 2 });
    expect(page.body.data.map((item: { name: string }) => item.name)).toEqual(["Third", "Second"]);
    expect(page.body.data[0]).not.toHaveProperty("policy_data");
    expect(Object.keys(page.body.data[0])).toEqual(
      expect.arrayContaining(["id", "name", "device_count", "active", "created_at", "version", "is_default"]),
    );
    const next = await t.request("GET", "/api/v1/policies?page=2&page_size=2", { token: org.adminToken });
    expect(next.body.data.map((item: { name: string }) => item.name)).toEqual(["First", "Default policy"]);
  });

  test("page_size over 100 is 400 naming page_size", async () => {
    const org = await t.createOrganization();
    const response = await t.request("GET", "/api/v1/policies?page_size=101", { token: org.adminToken });
    expect(response.status).toBe(400);
    expect(response.body.errors[0].field).toBe("page_size");
  });
});

describe("GET /api/v1/policies/:id", () => {
  test("an id written in uppercase finds the policy", async () => {
    const org = await t.createOrganization();
    const created = await createPolicy(org.adminToken, { name: "Shouting" });
    const response = await t.request("GET", `/api/v1/policies/${created.id.toUpperCase()}`, {
      token: org.adminToken,
    });
    expect(response.status).toBe(200);
    expect(response.body.id).toBe(created.id);
  });

  test("an unknown or malformed id is 404", async () => {
    const org = await t.createOrganization();
    for (const id of ["01a204ac-0000-7000-8000-000000000000", "not-a-uuid"]) {
      const response = await t.request("GET", `/api/v1/policies/${id}`, { token: org.adminToken });
      expect(response.status).toBe(404);
      expect(response.body).toMatchObject({ code: 404, reason: "policy_not_found" });
    }
  });
});

describe("PUT /api/v1/policies/:id", () => {
  inProcessTest("changes name and description, answering the new version and updated_at", async () => {
    const org = await t.createOrganization();
    const policy = await createPolicy(org.adminToken, { name: "Old name" });
    t.clock.advanceSeconds(300);
    const updated = await t.request("PUT", `/api/v1/policies/${policy.id}`, {
      token: org.adminToken,
      body: { name: "New name", description: "Now described" },
    });
    expect(updated.status).toBe(200);
    expect(updated.body).toMatchObject({
      id: policy.id,
      name: "New name",
      description: "Now described",
      version: 2,
      updated_at: t.clock.now().toISOString(),
    });
    expect(updated.body.created_at).not.toBe(updated.body.updated_at);
  });

  test("a body without name, description or policy_data is 400", async () => {
    const org = await t.createOrganization();
    const policy = await createPolicy(org.adminToken, { name: "Untouched" });
    const response = await t.request("PUT", `/api/v1/policies/${policy.id}`, {
      token: org.adminToken,
      body: { expected_version: 1 },
    });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([
      { field: "body", message: "must contain name, description or policy_data" },
    ]);
  });

  test("renaming to a name another policy has is 409", async () => {
    const org = await t.createOrganization();
    await createPolicy(org.adminToken, { name: "Taken" });
    const policy = await createPolicy(org.adminToken, { name: "Mine" });
    const response = await t.request("PUT", `/api/v1/policies/${policy.id}`, {
      token: org.adminToken,
      body: { name: "Taken" },
    });
    expect(response.status).toBe(409);
  });

  test("an unknown policy is 404", async () => {
    const org = await t.createOrganization();
    const response = await t.request("PUT", "/api/v1/policies/01a204ac-0000-7000-8000-000000000000", {
      token: org.adminToken,
      body: { name: "x" },
    });
    expect(response.status).toBe(404);
  });
});

describe("DELETE /api/v1/policies/:id", () => {
  test("removes the policy and its history, naming the fallback policy", async () => {
    const org = await t.createOrganization();
    const defaultPolicy = await t.request("GET", "/api/v1/policies/default", { token: org.adminToken });
    const policy = await createPolicy(org.adminToken, { name: "Short-lived" });
    const deleted = await t.request("DELETE", `/api/v1/policies/${policy.id}`, { token: org.adminToken });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({
      message: "policy deleted; its devices now follow the default policy",
      affected_devices: 0,
      fallback_policy: defaultPolicy.body.id,
    });
    for (const path of ["", "/history", "/versions/1", "/devices"]) {
      const gone = await t.request("GET", `/api/v1/policies/${policy.id}${path}`, { token: org.adminToken });
      expect(gone.status).toBe(404);
    }
    const again = await t.request("DELETE", `/api/v1/policies/${policy.id}`, { token: org.adminToken });
    expect(again.status).toBe(404);
  });

  test("the default policy cannot be deleted", async () => {
    const org = await t.createOrganization();
    const defaultPolicy = await t.request("GET", "/api/v1/policies/default", { token: org.adminToken });
    const response = await t.request("DELETE", `/api/v1/policies/${defaultPolicy.body.id}`, {
      token: org.adminToken,
    });
    expect(response.status).toBe(409);
    expect(response.body.reason).toBe("default_policy_not_deletable");
    const still = await t.request("GET", `/api/v1/policies/${defaultPolicy.body.id}`, {
      token: org.adminToken,
    });
    expect(still.status).toBe(200);
  });
});

const guarded = await t.createOrganization();
const guardedPolicy = await createPolicy(guarded.adminToken, { name: "Guarded" });

describe("access", () => {
  const org = guarded;
  const policy = guardedPolicy;
  const reads: [string, string, unknown?][] = [
    ["GET", "/api/v1/policies"],
    ["GET", `/api/v1/policies/${policy.id}`],
    ["GET", `/api/v1/policies/${policy.id}/devices`],
    ["GET", `/api/v1/policies/${policy.id}/history`],
    ["GET", `/api/v1/policies/${policy.id}/versions/1`],
    ["GET", "/api/v1/policies/default"],
    ["GET", "/api/v1/policies/templates"],
    ["POST", "/api/v1/policies/validate", { policy_data: {} }],
  ];
  const writes: [string, string, unknown?][] = [
    ["POST", "/api/v1/policies", { name: "Written" }],
    ["PUT", `/api/v1/policies/${policy.id}`, { description: "changed" }],
    ["PUT", "/api/v1/policies/default", { policy_id: policy.id }],
    ["POST", "/api/v1/policies/from-template", { template_id: "byod", name: "From template" }],
    ["DELETE", `/api/v1/policies/${policy.id}`],
  ];

  test("every endpoint needs authentication", async () => {
    for (const [method, path, body] of [...reads, ...writes]) {
      const response = await t.request(method, path, { body });
      expect({ method, path, status: response.status }).toEqual({ method, path, status: 401 });
    }
  });

  test("policies:read reads, validates and lists templates, but writes nothing", async () => {
    const key = await t.createApiKey(org.adminToken, ["policies:read"]);
    for (const [method, path, body] of reads) {
      const response = await t.request(method, path, { token: key, body });
      expect({ method, path, status: response.status }).toEqual({ method, path, status: 200 });
    }
    for (const [method, path, body] of writes) {
      const response = await t.request(method, path, { token: key, body });
      expect({ method, path, status: response.status }).toEqual({ method, path, status: 403 });
      expect(response.body.details).toContain("policies:write");
    }
  });

  test("without policies:read nothing can be read", async () => {
    const key = await t.createApiKey(org.adminToken, ["devices:read", "policies:write"]);
    for (const [method, path, body] of reads) {
      const response = await t.request(method, path, { token: key, body });
      expect({ method, path, status: response.status }).toEqual({ method, path, status: 403 });
      expect(response.body.details).toContain("policies:read");
    }
  });

  test("roles: an auditor reads but cannot write, an operator writes, a member does neither", async () => {
    const auditor = await t.createUser(org.adminToken, "auditor");
    const operator = await t.createUser(org.adminToken, "operator");
    const member = await t.createUser(org.adminToken, "member");
    expect((await t.request("GET", "/api/v1/policies", { token: auditor.token })).status).toBe(200);
    const denied = await t.request("POST", "/api/v1/policies", {
      token: auditor.token,
      body: { name: "Auditor's" },
    });
    expect(denied.status).toBe(403);
    const written = await t.request("POST", "/api/v1/policies", {
      token: operator.token,
      body: { name: "Operator's" },
    });
    expect(written.status).toBe(201);
    expect((await t.request("GET", "/api/v1/policies", { token: member.token })).status).toBe(403);
  });

  test("another organization's policy is 404 on every endpoint, and never listed", async () => {
    const other = await t.createOrganization();
    const byId: [string, string, unknown?][] = [
      ["GET", `/api/v1/policies/${policy.id}`],
      ["GET", `/api/v1/policies/${policy.id}/devices`],
      ["GET", `/api/v1/policies/${policy.id}/history`],
      ["GET", `/api/v1/policies/${policy.id}/versions/1`],
      ["PUT", `/api/v1/policies/${policy.id}`, { description: "hijacked" }],
      ["PUT", "/api/v1/policies/default", { policy_id: policy.id }],
      ["DELETE", `/api/v1/policies/${policy.id}`],
    ];
    for (const [method, path, body] of byId) {
      const response = await t.request(method, path, { token: other.adminToken, body });
      expect({ method, path, status: response.status }).toEqual({ method, path, status: 404 });
    }
    const list = await t.request("GET", "/api/v1/policies", { token: other.adminToken });
    expect(list.body.data.map((item: { id: string }) => item.id)).not.toContain(policy.id);
    const untouched = await t.request("GET", `/api/v1/policies/${policy.id}`, { token: org.adminToken });
    expect(untouched.body).toMatchObject({ version: 1, description: "" });
  });
});
