import { describe, expect, test } from "bun:test";
import { makeSigningCertificate } from "../helpers/saml-idp";
import { freshTestApps, inProcessTest } from "../helpers/test-app";

const CURRENT = "/api/v1/organizations/current";

const newApp = freshTestApps({ rate_limit: { unauthenticated_per_minute: 10_000 } });

const SAML = {
  enabled: true,
  idp_entity_id: "https://idp.example.com/entity",
  idp_sso_url: "https://idp.example.com/sso",
  idp_certificate: makeSigningCertificate("idp.example.com").certificate,
  redirect_uris: ["https://console.example.com/sso/saml"],
};

describe("GET /organizations/current", () => {
  inProcessTest("returns the caller's organization, to any signed-in user", async () => {
    const t = await newApp();
    const org = await t.createOrganization("Acme");
    const member = await t.createUser(org.adminToken, "member");

    const response = await t.request("GET", CURRENT, { token: member.token });

    expect(response.status).toBe(200);
    expect(response.body.id).toBe(org.organizationId);
    expect(response.body.name).toBe("Acme");
    expect(response.body.plan).toBe("standard");
    expect(response.body.user_count).toBe(2);
    expect(response.body.default_policy_id).toEqual(expect.any(String));
    expect(response.body.created_at).toBe(t.clock.now().toISOString());
  });

  test("each caller sees only their own organization", async () => {
    const t = await newApp();
    const org = await t.createOrganization("Acme");
    const otherOrg = await t.createOrganization("Globex");
    const mine = await t.request("GET", CURRENT, { token: org.adminToken });
    const theirs = await t.request("GET", CURRENT, { token: otherOrg.adminToken });
    expect(mine.body.name).toBe("Acme");
    expect(theirs.body.name).toBe("Globex");
  });

  test("without a token it is 401", async () => {
    const t = await newApp();
    const response = await t.request("GET", CURRENT);
    expect(response.status).toBe(401);
    expect(response.body.code).toBe(401);
  });
});

describe("PATCH /organizations/current", () => {
  test("an admin renames the organization", async () => {
    const t = await newApp();
    const org = await t.createOrganization("Acme");
    const otherOrg = await t.createOrganization("Globex");

    const response = await t.request("PATCH", CURRENT, {
      token: org.adminToken,
      body: { name: "Acme Corp" },
    });

    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id: org.organizationId, name: "Acme Corp", plan: "standard" });
    const fetched = await t.request("GET", CURRENT, { token: org.adminToken });
    expect(fetched.body).toMatchObject({ name: "Acme Corp" });
    const other = await t.request("GET", CURRENT, { token: otherOrg.adminToken });
    expect(other.body).toMatchObject({ name: "Globex", plan: "standard" });
  });

  test("an admin cannot change the plan: 403 plan_set_by_operator, and neither plan nor rate limit moves", async () => {
    const t = await newApp();
    const org = await t.createOrganization("Acme");
    const refused = await t.request("PATCH", CURRENT, {
      token: org.adminToken,
      body: { name: "Acme Corp", plan: "enterprise" },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.reason).toBe("plan_set_by_operator");
    expect(refused.body.details).toContain("bulwark org set-plan");
    const after = await t.request("GET", CURRENT, { token: org.adminToken });
    expect(after.body).toMatchObject({ name: "Acme", plan: "standard" });
    expect(after.headers.get("x-ratelimit-limit")).toBe("1000");
  });

  test("non-admins get 403 naming admin, and nothing changes", async () => {
    const t = await newApp();
    const org = await t.createOrganization("Acme");
    for (const role of ["operator", "auditor", "member"] as const) {
      const user = await t.createUser(org.adminToken, role);
      const response = await t.request("PATCH", CURRENT, { token: user.token, body: { name: "Hijacked" } });
      expect(response.status).toBe(403);
      expect(response.body.code).toBe(403);
      expect(response.body.details).toContain("admin");
    }
    const key = await t.createApiKey(org.adminToken, ["users:read", "users:write"]);
    expect((await t.request("PATCH", CURRENT, { token: key, body: { name: "Hijacked" } })).status).toBe(403);
    expect((await t.request("GET", CURRENT, { token: org.adminToken })).body.name).toBe("Acme");
  });

  test("SAML on the standard plan is a 403; once the operator sets enterprise it is accepted", async () => {
    const t = await newApp();
    const org = await t.createOrganization("Saml Corp");

    const refused = await t.request("PATCH", CURRENT, {
      token: org.adminToken,
      body: { sso: { saml: SAML } },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.reason).toBe("saml_requires_enterprise");
    expect(refused.body.message).toBe("SAML single sign-on needs the enterprise plan");
    expect((await t.request("GET", CURRENT, { token: org.adminToken })).body.sso.saml).toBeUndefined();

    await t.setPlan("Saml Corp", "enterprise");
    const accepted = await t.request("PATCH", CURRENT, {
      token: org.adminToken,
      body: { sso: { saml: SAML } },
    });
    expect(accepted.status).toBe(200);
    expect(accepted.body.sso.saml).toMatchObject(SAML);

    // The operator cannot drop the plan under an enabled SAML connection either.
    await expect(t.setPlan("Saml Corp", "standard")).rejects.toThrow();
    expect((await t.request("GET", CURRENT, { token: org.adminToken })).body.plan).toBe("enterprise");
  });

  test("bad input is a 400 naming the field", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    for (const [body, field] of [
      [{ plan: "gold" }, "plan"],
      [{ name: "" }, "name"],
      [{ sso: { oidc: { enabled: "yes" } } }, "sso.oidc.enabled"],
      [{ sso: { oidc: { enabled: true, issuer: "not a url" } } }, "sso.oidc.issuer"],
    ] as const) {
      const response = await t.request("PATCH", CURRENT, { token: org.adminToken, body });
      expect(response.status).toBe(400);
      expect(response.body.details).toContain(field);
    }
    const empty = await t.request("PATCH", CURRENT, { token: org.adminToken, body: {} });
    expect(empty.status).toBe(400);
    const malformed = await t.request("PATCH", CURRENT, { token: org.adminToken, rawBody: "{" });
    expect(malformed.status).toBe(400);
    expect(malformed.body.reason).toBe("invalid_json");
  });

  test("without a token it is 401", async () => {
    const t = await newApp();
    expect((await t.request("PATCH", CURRENT, { body: { name: "x" } })).status).toBe(401);
  });
});

describe("plan and rate limits", () => {
  test("the enterprise plan raises the limit to 10000 per minute for that organization's users", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const otherOrg = await t.createOrganization();
    const member = await t.createUser(org.adminToken, "member");
    const limitOf = async (token: string) =>
      (await t.request("GET", "/api/v1/users/me", { token })).headers.get("x-ratelimit-limit");

    expect(await limitOf(member.token)).toBe("1000");

    await t.setPlan(org.organizationId, "enterprise");

    expect(await limitOf(member.token)).toBe("10000");
    expect(await limitOf(org.adminToken)).toBe("10000");
    expect(await limitOf(otherOrg.adminToken)).toBe("1000");
  });
});
