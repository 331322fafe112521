import { describe, expect, test } from "bun:test";
import { freshTestApps, inProcessTest, TEST_PASSWORD } from "../helpers/test-app";

const USERS = "/api/v1/users";
const ME = "/api/v1/users/me";

const newApp = freshTestApps({ rate_limit: { unauthenticated_per_minute: 10_000 } });

const newUser = (overrides: Record<string, unknown> = {}) => ({
  email: `user-${crypto.randomUUID().slice(0, 8)}@example.com`,
  name: "Ada Lovelace",
  role: "operator",
  password: "a-long-enough-password",
  ...overrides,
});

describe("POST /users", () => {
  inProcessTest("creates a user who can then sign in", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const input = newUser({ email: "Ada@Example.com" });

    const response = await t.request("POST", USERS, { token: org.adminToken, body: input });

    expect(response.status).toBe(201);
    expect(response.body.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(response.body.email).toBe("ada@example.com");
    expect(response.body.name).toBe("Ada Lovelace");
    expect(response.body.role).toBe("operator");
    expect(response.body.organization_id).toBe(org.organizationId);
    expect(response.body.disabled).toBe(false);
    expect(response.body.created_at).toBe(t.clock.now().toISOString());
    expect(JSON.stringify(response.body)).not.toContain(input.password);
    expect(Object.keys(response.body).join(",")).not.toMatch(/password|hash/);

    const signIn = await t.request("POST", "/api/v1/auth/login", {
      body: { email: "ada@example.com", password: input.password },
    });
    expect(signIn.status).toBe(200);
    expect(signIn.body.user.role).toBe("operator");
  });

  test("a duplicate email is 409, also in another case or another organization", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const otherOrg = await t.createOrganization();
    const input = newUser();
    expect((await t.request("POST", USERS, { token: org.adminToken, body: input })).status).toBe(201);

    const again = await t.request("POST", USERS, {
      token: org.adminToken,
      body: { ...input, email: input.email.toUpperCase() },
    });
    expect(again.status).toBe(409);
    expect(again.body.code).toBe(409);
    const elsewhere = await t.request("POST", USERS, { token: otherOrg.adminToken, body: input });
    expect(elsewhere.status).toBe(409);
  });

  test("an invalid role, email or short password is a 400 naming the field", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const cases: [Record<string, unknown>, string][] = [
      [newUser({ role: "superuser" }), "role"],
      [newUser({ email: "not-an-email" }), "email"],
      [newUser({ password: "short" }), "password"],
      [newUser({ password: "x".repeat(11) }), "password"],
      [newUser({ name: "" }), "name"],
      [{ email: "a@example.com", role: "member", password: "a-long-enough-password" }, "name"],
    ];
    for (const [body, field] of cases) {
      const response = await t.request("POST", USERS, { token: org.adminToken, body });
      expect(response.status).toBe(400);
      expect(response.body.code).toBe(400);
      expect(response.body.details).toContain(field);
    }
    const malformed = await t.request("POST", USERS, { token: org.adminToken, rawBody: "[" });
    expect(malformed.status).toBe(400);
    expect(malformed.body.reason).toBe("invalid_json");
  });

  test("operators, auditors and members cannot create users (403 naming users:write)", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    for (const role of ["operator", "auditor", "member"] as const) {
      const user = await t.createUser(org.adminToken, role);
      const response = await t.request("POST", USERS, { token: user.token, body: newUser() });
      expect(response.status).toBe(403);
      expect(response.body.details).toContain("users:write");
    }
  });

  test("without a token it is 401", async () => {
    const t = await newApp();
    const response = await t.request("POST", USERS, { body: newUser() });
    expect(response.status).toBe(401);
    expect(response.body.code).toBe(401);
  });
});

describe("GET /users", () => {
  test("lists the organization's users with pagination", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const otherOrg = await t.createOrganization();
    const operator = await t.createUser(org.adminToken, "operator");
    const member = await t.createUser(org.adminToken, "member");

    const response = await t.request("GET", USERS, { token: org.adminToken });
    expect(response.status).toBe(200);
    expect(response.body.total).toBe(3);
    expect(response.body.page).toBe(1);
    expect(response.body.page_size).toBe(20);
    expect(response.body.total_pages).toBe(1);
    const ids = response.body.data.map((user: { id: string }) => user.id);
    expect(ids.sort()).toEqual([org.adminId, operator.id, member.id].sort());
    expect(ids).not.toContain(otherOrg.adminId);

    const page2 = await t.request("GET", `${USERS}?page=2&page_size=2`, { token: org.adminToken });
    expect(page2.status).toBe(200);
    expect(page2.body.data).toHaveLength(1);
    expect(page2.body).toMatchObject({ total: 3, page: 2, page_size: 2, total_pages: 2 });
  });

  test("operators and auditors may read users; members may not (403 naming users:read)", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    for (const role of ["operator", "auditor"] as const) {
      const user = await t.createUser(org.adminToken, role);
      expect((await t.request("GET", USERS, { token: user.token })).status).toBe(200);
      expect((await t.request("GET", `${USERS}/${org.adminId}`, { token: user.token })).status).toBe(200);
    }
    const member = await t.createUser(org.adminToken, "member");
    const list = await t.request("GET", USERS, { token: member.token });
    expect(list.status).toBe(403);
    expect(list.body.details).toContain("users:read");
    const one = await t.request("GET", `${USERS}/${org.adminId}`, { token: member.token });
    expect(one.status).toBe(403);
  });

  test("bad paging is a 400 naming the parameter", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    for (const [query, field] of [
      ["page=0", "page"],
      ["page=abc", "page"],
      ["page_size=101", "page_size"],
      ["page_size=1.5", "page_size"],
    ]) {
      const response = await t.request("GET", `${USERS}?${query}`, { token: org.adminToken });
      expect(response.status).toBe(400);
      expect(response.body.code).toBe(400);
      expect(response.body.details).toContain(field);
    }
  });

  test("without a token it is 401", async () => {
    const t = await newApp();
    expect((await t.request("GET", USERS)).status).toBe(401);
  });
});

describe("GET/PATCH/DELETE /users/:id", () => {
  test("gets a user", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const member = await t.createUser(org.adminToken, "member");
    const response = await t.request("GET", `${USERS}/${member.id}`, { token: org.adminToken });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id: member.id, email: member.email, role: "member" });
  });

  test("changes name and role; the new role applies to the user's existing token", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const member = await t.createUser(org.adminToken, "member");
    expect((await t.request("GET", USERS, { token: member.token })).status).toBe(403);

    const response = await t.request("PATCH", `${USERS}/${member.id}`, {
      token: org.adminToken,
      body: { name: "Renamed", role: "auditor" },
    });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({ id: member.id, name: "Renamed", role: "auditor" });
    const fetched = await t.request("GET", `${USERS}/${member.id}`, { token: org.adminToken });
    expect(fetched.body).toMatchObject({ name: "Renamed", role: "auditor" });

    expect((await t.request("GET", USERS, { token: member.token })).status).toBe(200);
  });

  test("disabling and re-enabling a user", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const member = await t.createUser(org.adminToken, "member");
    const disabled = await t.request("PATCH", `${USERS}/${member.id}`, {
      token: org.adminToken,
      body: { disabled: true },
    });
    expect(disabled.body.disabled).toBe(true);
    expect((await t.request("GET", ME, { token: member.token })).status).toBe(401);

    await t.request("PATCH", `${USERS}/${member.id}`, { token: org.adminToken, body: { disabled: false } });
    const session = await t.signIn(member.email);
    expect((await t.request("GET", ME, { token: session.token })).status).toBe(200);
  });

  test("bad PATCH input is a 400 naming the field", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const member = await t.createUser(org.adminToken, "member");
    for (const [body, field] of [
      [{ role: "owner" }, "role"],
      [{ disabled: "yes" }, "disabled"],
      [{ name: "" }, "name"],
    ] as const) {
      const response = await t.request("PATCH", `${USERS}/${member.id}`, { token: org.adminToken, body });
      expect(response.status).toBe(400);
      expect(response.body.details).toContain(field);
    }
    // Nothing that can be changed: the answer says what can.
    for (const body of [{}, { email: "new@example.com" }]) {
      const response = await t.request("PATCH", `${USERS}/${member.id}`, { token: org.adminToken, body });
      expect(response.status).toBe(400);
      expect(response.body.details).toContain("name, role, disabled");
    }
    const unchanged = await t.request("GET", `${USERS}/${member.id}`, { token: org.adminToken });
    expect(unchanged.body.email).toBe(member.email);
  });

  test("deletes a user: 204, then 404, and the email can be used again", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const member = await t.createUser(org.adminToken, "member");

    const response = await t.request("DELETE", `${USERS}/${member.id}`, { token: org.adminToken });
    expect(response.status).toBe(204);
    expect(response.body).toBeNull();

    expect((await t.request("GET", `${USERS}/${member.id}`, { token: org.adminToken })).status).toBe(404);
    expect((await t.request("DELETE", `${USERS}/${member.id}`, { token: org.adminToken })).status).toBe(404);
    const list = await t.request("GET", USERS, { token: org.adminToken });
    expect(list.body.data.map((user: { id: string }) => user.id)).not.toContain(member.id);
    const recreated = await t.request("POST", USERS, {
      token: org.adminToken,
      body: newUser({ email: member.email }),
    });
    expect(recreated.status).toBe(201);
  });

  test("operators and auditors cannot change or delete users (403 naming users:write)", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const member = await t.createUser(org.adminToken, "member");
    for (const role of ["operator", "auditor"] as const) {
      const user = await t.createUser(org.adminToken, role);
      const patch = await t.request("PATCH", `${USERS}/${member.id}`, {
        token: user.token,
        body: { name: "hijacked" },
      });
      expect(patch.status).toBe(403);
      expect(patch.body.details).toContain("users:write");
      const remove = await t.request("DELETE", `${USERS}/${member.id}`, { token: user.token });
      expect(remove.status).toBe(403);
      expect(remove.body.details).toContain("users:write");
    }
    const fetched = await t.request("GET", `${USERS}/${member.id}`, { token: org.adminToken });
    expect(fetched.body.name).toBe("Test member");
  });

  test("another organization's user is 404 for get, patch and delete, and is untouched", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const otherOrg = await t.createOrganization();
    const foreign = await t.createUser(otherOrg.adminToken, "member");

    const get = await t.request("GET", `${USERS}/${foreign.id}`, { token: org.adminToken });
    expect(get.status).toBe(404);
    expect(get.body.code).toBe(404);
    expect(JSON.stringify(get.body)).not.toContain(foreign.email);
    const patch = await t.request("PATCH", `${USERS}/${foreign.id}`, {
      token: org.adminToken,
      body: { role: "admin" },
    });
    expect(patch.status).toBe(404);
    const remove = await t.request("DELETE", `${USERS}/${foreign.id}`, { token: org.adminToken });
    expect(remove.status).toBe(404);

    const stillThere = await t.request("GET", `${USERS}/${foreign.id}`, { token: otherOrg.adminToken });
    expect(stillThere.status).toBe(200);
    expect(stillThere.body.role).toBe("member");
    expect((await t.request("GET", ME, { token: foreign.token })).status).toBe(200);
  });

  test("an unknown id is 404; no token is 401", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    expect(
      (await t.request("GET", `${USERS}/${crypto.randomUUID()}`, { token: org.adminToken })).status,
    ).toBe(404);
    expect((await t.request("GET", `${USERS}/not-a-uuid`, { token: org.adminToken })).status).toBe(404);
    expect((await t.request("GET", `${USERS}/${org.adminId}`)).status).toBe(401);
    expect((await t.request("PATCH", `${USERS}/${org.adminId}`, { body: { name: "x" } })).status).toBe(401);
    expect((await t.request("DELETE", `${USERS}/${org.adminId}`)).status).toBe(401);
  });
});

describe("privilege escalation", () => {
  test("an API key with users:write cannot create an admin or promote anyone beyond its own scopes", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const key = await t.createApiKey(org.adminToken, ["users:read", "users:write"]);

    const admin = await t.request("POST", USERS, { token: key, body: newUser({ role: "admin" }) });
    expect(admin.status).toBe(403);
    expect(admin.body.details).toContain("admin");
    const operator = await t.request("POST", USERS, { token: key, body: newUser({ role: "operator" }) });
    expect(operator.status).toBe(403);
    expect(operator.body.details).toContain("devices:write");

    const member = await t.request("POST", USERS, { token: key, body: newUser({ role: "member" }) });
    expect(member.status).toBe(201);
    const promote = await t.request("PATCH", `${USERS}/${member.body.id}`, {
      token: key,
      body: { role: "admin" },
    });
    expect(promote.status).toBe(403);
    const rename = await t.request("PATCH", `${USERS}/${member.body.id}`, {
      token: key,
      body: { name: "Renamed" },
    });
    expect(rename.status).toBe(200);

    const list = await t.request("GET", USERS, { token: org.adminToken });
    expect(list.body.data.filter((user: { role: string }) => user.role === "admin")).toHaveLength(1);
  });

  test("an API key with users:write cannot disable or delete an admin", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const second = await t.createUser(org.adminToken, "admin");
    const key = await t.createApiKey(org.adminToken, ["users:write"]);

    const disable = await t.request("PATCH", `${USERS}/${second.id}`, {
      token: key,
      body: { disabled: true },
    });
    expect(disable.status).toBe(403);
    const remove = await t.request("DELETE", `${USERS}/${second.id}`, { token: key });
    expect(remove.status).toBe(403);
    expect((await t.request("GET", ME, { token: second.token })).status).toBe(200);
  });
});

describe("the last admin", () => {
  test("cannot be demoted, disabled or deleted (409)", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const path = `${USERS}/${org.adminId}`;

    const demote = await t.request("PATCH", path, { token: org.adminToken, body: { role: "operator" } });
    expect(demote.status).toBe(409);
    expect(demote.body.code).toBe(409);
    const disable = await t.request("PATCH", path, { token: org.adminToken, body: { disabled: true } });
    expect(disable.status).toBe(409);
    const remove = await t.request("DELETE", path, { token: org.adminToken });
    expect(remove.status).toBe(409);

    const me = await t.request("GET", ME, { token: org.adminToken });
    expect(me.body).toMatchObject({ role: "admin", disabled: false });
  });

  test("with a second admin, one of them can be demoted, and then the other is the last", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const second = await t.createUser(org.adminToken, "admin");

    const demote = await t.request("PATCH", `${USERS}/${org.adminId}`, {
      token: second.token,
      body: { role: "operator" },
    });
    expect(demote.status).toBe(200);
    expect(demote.body.role).toBe("operator");

    const lastOne = await t.request("DELETE", `${USERS}/${second.id}`, { token: second.token });
    expect(lastOne.status).toBe(409);
  });

  test("with a second admin, one can be disabled or deleted", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const second = await t.createUser(org.adminToken, "admin");
    const third = await t.createUser(org.adminToken, "admin");

    const disable = await t.request("PATCH", `${USERS}/${second.id}`, {
      token: org.adminToken,
      body: { disabled: true },
    });
    expect(disable.status).toBe(200);
    const remove = await t.request("DELETE", `${USERS}/${third.id}`, { token: org.adminToken });
    expect(remove.status).toBe(204);
    // The disabled admin does not count: the remaining enabled admin is the last.
    const lastOne = await t.request("PATCH", `${USERS}/${org.adminId}`, {
      token: org.adminToken,
      body: { role: "member" },
    });
    expect(lastOne.status).toBe(409);
  });
});

describe("/users/me", () => {
  test("any signed-in user, a member included, reads their own profile", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const member = await t.createUser(org.adminToken, "member");
    const response = await t.request("GET", ME, { token: member.token });
    expect(response.status).toBe(200);
    expect(response.body).toMatchObject({
      id: member.id,
      email: member.email,
      role: "member",
      organization_id: org.organizationId,
    });
    expect((await t.request("GET", ME)).status).toBe(401);
  });

  test("PUT /users/me/password changes the password and ends the user's other sessions", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const member = await t.createUser(org.adminToken, "member");
    const otherSession = await t.signIn(member.email);

    const response = await t.request("PUT", `${ME}/password`, {
      token: member.token,
      body: { current_password: TEST_PASSWORD, new_password: "a-brand-new-password" },
    });
    expect(response.status).toBe(200);

    expect((await t.request("GET", ME, { token: member.token })).status).toBe(200);
    expect((await t.request("GET", ME, { token: otherSession.token })).status).toBe(401);
    const refresh = await t.request("POST", "/api/v1/auth/refresh", {
      body: { refresh_token: otherSession.refresh_token },
    });
    expect(refresh.status).toBe(401);
    const ownRefresh = await t.request("POST", "/api/v1/auth/refresh", {
      body: { refresh_token: member.session.refresh_token },
    });
    expect(ownRefresh.status).toBe(200);

    const oldPassword = await t.request("POST", "/api/v1/auth/login", {
      body: { email: member.email, password: TEST_PASSWORD },
    });
    expect(oldPassword.status).toBe(401);
    const newPassword = await t.request("POST", "/api/v1/auth/login", {
      body: { email: member.email, password: "a-brand-new-password" },
    });
    expect(newPassword.status).toBe(200);
  });

  test("a wrong current password is a 400 naming current_password and changes nothing", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const member = await t.createUser(org.adminToken, "member");
    const otherSession = await t.signIn(member.email);

    const response = await t.request("PUT", `${ME}/password`, {
      token: member.token,
      body: { current_password: "not-my-password", new_password: "a-brand-new-password" },
    });
    expect(response.status).toBe(400);
    expect(response.body.errors).toEqual([{ field: "current_password", message: "is not correct" }]);

    expect((await t.request("GET", ME, { token: otherSession.token })).status).toBe(200);
    expect((await t.request("GET", ME, { token: member.token })).status).toBe(200);
    await t.signIn(member.email, TEST_PASSWORD);
  });

  test("a short or missing new password is a 400 naming new_password", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const member = await t.createUser(org.adminToken, "member");
    for (const body of [
      { current_password: TEST_PASSWORD, new_password: "short" },
      { current_password: TEST_PASSWORD },
    ]) {
      const response = await t.request("PUT", `${ME}/password`, { token: member.token, body });
      expect(response.status).toBe(400);
      expect(response.body.details).toContain("new_password");
    }
    await t.signIn(member.email, TEST_PASSWORD);
  });

  test("without a token it is 401", async () => {
    const t = await newApp();
    const response = await t.request("PUT", `${ME}/password`, {
      body: { current_password: TEST_PASSWORD, new_password: "a-brand-new-password" },
    });
    expect(response.status).toBe(401);
  });
});

describe("password change guards", () => {
  test("wrong current passwords count toward the sign-in lockout", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const member = await t.createUser(org.adminToken, "member");
    const guess = (current: string) =>
      t.request("PUT", `${ME}/password`, {
        token: member.token,
        body: { current_password: current, new_password: "a-brand-new-password" },
      });
    for (let attempt = 0; attempt < 5; attempt++) expect((await guess(`wrong-${attempt}`)).status).toBe(400);
    const locked = await guess(TEST_PASSWORD);
    expect(locked.status).toBe(429);
    expect(locked.headers.get("retry-after")).not.toBeNull();
    await t.signIn(member.email, TEST_PASSWORD).then(
      () => {
        throw new Error("sign-in should be locked too");
      },
      (error: Error) => expect(error.message).toContain("429"),
    );
  });

  test("an API key cannot change its owner's password", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const key = await t.createApiKey(org.adminToken, ["devices:read"]);
    const response = await t.request("PUT", `${ME}/password`, {
      token: key,
      body: { current_password: TEST_PASSWORD, new_password: "a-brand-new-password" },
    });
    expect(response.status).toBe(403);
    await t.signIn(org.adminEmail, TEST_PASSWORD);
  });
});
