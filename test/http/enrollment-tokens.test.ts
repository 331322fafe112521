import { afterAll, describe, expect, test } from "bun:test";
import { JOBS } from "../../src/jobs/jobs";
import { createDeviceTestApp, createEnrollmentToken, createTestPolicy, enrollBody } from "../helpers/devices";
import { inProcessTest } from "../helpers/test-app";

const t = await createDeviceTestApp();
afterAll(() => t.close());

const TOKENS = "/api/v1/enrollment-tokens";
const ENROLL = "/api/v1/devices/enroll";

describe("POST /enrollment-tokens", () => {
  inProcessTest("creates a single-use token valid for a week, returning its value once", async () => {
    const org = await t.createOrganization();
    const response = await t.request("POST", TOKENS, { token: org.adminToken, body: {} });
    expect(response.status).toBe(201);
    const now = t.clock.now().toISOString();
    expect(response.body).toEqual({
      id: expect.any(String),
      token: expect.stringMatching(/^bwe_[A-Za-z0-9_-]{43}$/),
      expires_at: new Date(Date.parse(now) + 168 * 3600_000).toISOString(),
      max_uses: 1,
      uses: 0,
      user_id: null,
      policy_id: null,
      created_at: now,
      revoked_at: null,
      state: "active",
    });
  });

  inProcessTest(
    "binds a user and a policy of the organization, with a lifetime and unlimited uses",
    async () => {
      const org = await t.createOrganization();
      const member = await t.createUser(org.adminToken, "member");
      const policy = await createTestPolicy(t, org.adminToken, "Kiosk");
      const response = await t.request("POST", TOKENS, {
        token: org.adminToken,
        body: { expires_in_hours: 2, max_uses: null, user_id: member.id, policy_id: policy.id },
      });
      expect(response.status).toBe(201);
      expect(structuredClone(response.body)).toMatchObject({
        expires_at: new Date(t.clock.now().getTime() + 2 * 3600_000).toISOString(),
        max_uses: null,
        user_id: member.id,
        policy_id: policy.id,
      });
    },
  );

  test("404 naming the user or policy that is not in the organization", async () => {
    const org = await t.createOrganization();
    const other = await t.createOrganization();
    const otherPolicy = await createTestPolicy(t, other.adminToken, "Theirs");

    const user = await t.request("POST", TOKENS, { token: org.adminToken, body: { user_id: other.adminId } });
    expect(user.status).toBe(404);
    expect(user.body.reason).toBe("user_not_found");

    const policy = await t.request("POST", TOKENS, {
      token: org.adminToken,
      body: { policy_id: otherPolicy.id },
    });
    expect(policy.status).toBe(404);
    expect(policy.body.reason).toBe("policy_not_found");
  });

  test("400 naming each invalid field", async () => {
    const org = await t.createOrganization();
    for (const [body, field] of [
      [{ expires_in_hours: 0 }, "expires_in_hours"],
      [{ expires_in_hours: 1.5 }, "expires_in_hours"],
      [{ max_uses: 0 }, "max_uses"],
      [{ max_uses: "many" }, "max_uses"],
      [{ user_id: "not-a-uuid" }, "user_id"],
      [{ policy_id: 42 }, "policy_id"],
    ] as const) {
      const response = await t.request("POST", TOKENS, { token: org.adminToken, body });
      expect(response.status).toBe(400);
      expect(response.body.errors.map((error: { field: string }) => error.field)).toContain(field);
    }
  });

  test("401 without a token, 403 naming devices:write for a reader", async () => {
    const org = await t.createOrganization();
    expect((await t.request("POST", TOKENS, { body: {} })).status).toBe(401);
    const auditor = await t.createUser(org.adminToken, "auditor");
    const forbidden = await t.request("POST", TOKENS, { token: auditor.token, body: {} });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.details).toContain("devices:write");
    const readKey = await t.createApiKey(org.adminToken, ["devices:read"]);
    expect((await t.request("GET", TOKENS, { token: readKey })).status).toBe(403);
  });

  test("an operator and a devices:write API key may create tokens", async () => {
    const org = await t.createOrganization();
    const operator = await t.createUser(org.adminToken, "operator");
    expect((await t.request("POST", TOKENS, { token: operator.token, body: {} })).status).toBe(201);
    const key = await t.createApiKey(org.adminToken, ["devices:write"]);
    expect((await t.request("POST", TOKENS, { token: key, body: {} })).status).toBe(201);
  });
});

describe("GET /enrollment-tokens", () => {
  inProcessTest(
    "lists the organization's tokens newest first, without their values, with their state",
    async () => {
      const org = await t.createOrganization();
      const other = await t.createOrganization();
      await createEnrollmentToken(t, other.adminToken);
      const first = await createEnrollmentToken(t, org.adminToken);
      t.clock.advanceSeconds(1);
      const second = await createEnrollmentToken(t, org.adminToken, { max_uses: 3 });
      await t.request("DELETE", `${TOKENS}/${first.id}`, { token: org.adminToken });

      const response = await t.request("GET", `${TOKENS}?page_size=1`, { token: org.adminToken });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ total: 2, page: 1, page_size: 1, total_pages: 2 });
      expect(response.body.data).toHaveLength(1);
      expect(structuredClone(response.body.data[0])).toMatchObject({
        id: second.id,
        state: "active",
        max_uses: 3,
      });
      expect(response.body.data[0].token).toBeUndefined();

      const next = await t.request("GET", `${TOKENS}?page=2&page_size=1`, { token: org.adminToken });
      expect(structuredClone(next.body.data[0])).toMatchObject({
        id: first.id,
        state: "revoked",
        revoked_at: expect.any(String),
      });
    },
  );

  inProcessTest("shows a used-up and an expired token as such, also after the cleanup job ran", async () => {
    const org = await t.createOrganization();
    const used = await createEnrollmentToken(t, org.adminToken);
    expect((await t.request("POST", ENROLL, { body: enrollBody(used.token) })).status).toBe(201);
    await createEnrollmentToken(t, org.adminToken, { expires_in_hours: 1 });
    t.clock.advanceSeconds(3601);
    await JOBS.find((job) => job.id === "purge-expired-device-credentials")?.run(t.deps);
    const response = await t.request("GET", TOKENS, { token: org.adminToken });
    const states = Object.fromEntries(
      response.body.data.map((token: { id: string; state: string; uses: number }) => [token.id, token]),
    );
    expect(states[used.id]).toMatchObject({ state: "used_up", uses: 1 });
    expect(response.body.data.map((token: { state: string }) => token.state).sort()).toEqual([
      "expired",
      "used_up",
    ]);
  });

  test("400 for an invalid page", async () => {
    const org = await t.createOrganization();
    const response = await t.request("GET", `${TOKENS}?page=0`, { token: org.adminToken });
    expect(response.status).toBe(400);
    expect(response.body.errors.map((error: { field: string }) => error.field)).toEqual(["page"]);
  });
});

describe("DELETE /enrollment-tokens/:id", () => {
  test("revokes the token: it enrolls no more devices", async () => {
    const org = await t.createOrganization();
    const created = await createEnrollmentToken(t, org.adminToken, { max_uses: 5 });
    const revoked = await t.request("DELETE", `${TOKENS}/${created.id}`, { token: org.adminToken });
    expect(revoked.status).toBe(204);
    const enroll = await t.request("POST", ENROLL, { body: enrollBody(created.token) });
    expect(enroll.status).toBe(401);
    expect(enroll.body.details).toBe("the enrollment token has been revoked");
    // Revoking again changes nothing.
    expect((await t.request("DELETE", `${TOKENS}/${created.id}`, { token: org.adminToken })).status).toBe(
      204,
    );
  });

  test("an id written in uppercase revokes the token", async () => {
    const org = await t.createOrganization();
    const created = await createEnrollmentToken(t, org.adminToken);
    const revoked = await t.request("DELETE", `${TOKENS}/${created.id.toUpperCase()}`, {
      token: org.adminToken,
    });
    expect(revoked.status).toBe(204);
    const enroll = await t.request("POST", ENROLL, { body: enrollBody(created.token) });
    expect(enroll.body.details).toBe("the enrollment token has been revoked");
  });

  test("404 for an unknown token or another organization's", async () => {
    const org = await t.createOrganization();
    const other = await t.createOrganization();
    const theirs = await createEnrollmentToken(t, other.adminToken);
    const response = await t.request("DELETE", `${TOKENS}/${theirs.id}`, { token: org.adminToken });
    expect(response.status).toBe(404);
    expect(response.body.reason).toBe("enrollment_token_not_found");
    expect((await t.request("POST", ENROLL, { body: enrollBody(theirs.token) })).status).toBe(201);
    const unknown = await t.request("DELETE", `${TOKENS}/${crypto.randomUUID()}`, { token: org.adminToken });
    expect(unknown.status).toBe(404);
  });

  test("401 without a token, 403 without devices:write", async () => {
    const org = await t.createOrganization();
    const created = await createEnrollmentToken(t, org.adminToken);
    expect((await t.request("DELETE", `${TOKENS}/${created.id}`)).status).toBe(401);
    const auditor = await t.createUser(org.adminToken, "auditor");
    const forbidden = await t.request("DELETE", `${TOKENS}/${created.id}`, { token: auditor.token });
    expect(forbidden.status).toBe(403);
    expect(forbidden.body.details).toContain("devices:write");
  });
});
