import { describe, expect, test } from "bun:test";
import { createLocalJWKSet, type JSONWebKeySet, jwtVerify } from "jose";
import { freshTestApps, inProcessTest, TEST_PASSWORD, type TestApp } from "../helpers/test-app";

const LOGIN = "/api/v1/auth/login";
const REFRESH = "/api/v1/auth/refresh";
const LOGOUT = "/api/v1/auth/logout";
const ME = "/api/v1/users/me";

/** Fresh apps; sign-ins are unauthenticated requests, so the per-IP limit is raised out of the way. */
const newApp = freshTestApps({ rate_limit: { unauthenticated_per_minute: 10_000 } });

function login(t: TestApp, email: string, password: string, headers: Record<string, string> = {}) {
  return t.request("POST", LOGIN, { body: { email, password }, headers });
}

describe("POST /auth/login", () => {
  test("returns an access token, a refresh token and the user", async () => {
    const t = await newApp();
    const org = await t.createOrganization();

    const response = await login(t, org.adminEmail, TEST_PASSWORD);

    expect(response.status).toBe(200);
    // A copy: bun:test's toMatchObject writes asymmetric matchers into the object it is given.
    expect(structuredClone(response.body)).toMatchObject({
      token: expect.any(String),
      refresh_token: expect.any(String),
      expires_in: 86400,
      token_type: "Bearer",
      user: {
        id: org.adminId,
        email: org.adminEmail,
        name: expect.any(String),
        role: "admin",
        organization_id: org.organizationId,
      },
    });
    expect(response.body.refresh_token).not.toBe(response.body.token);
    const me = await t.request("GET", ME, { token: response.body.token });
    expect(me.status).toBe(200);
    expect(me.body.id).toBe(org.adminId);
  });

  inProcessTest(
    "the access token verifies with the published JWKS and carries the documented claims",
    async () => {
      const t = await newApp();
      const org = await t.createOrganization();
      const operator = await t.createUser(org.adminToken, "operator");

      const jwks = await t.request<JSONWebKeySet>("GET", "/.well-known/jwks.json");
      expect(jwks.status).toBe(200);
      for (const key of jwks.body.keys) expect(key).not.toHaveProperty("d");

      const { payload } = await jwtVerify(operator.token, createLocalJWKSet(jwks.body), {
        issuer: t.config.server.base_url,
        currentDate: t.clock.now(),
      });
      const nowSeconds = Math.floor(t.clock.now().getTime() / 1000);
      expect(payload.sub).toBe(operator.id);
      expect(payload.org).toBe(org.organizationId);
      expect(payload.role).toBe("operator");
      expect(payload.scopes).toEqual([
        "devices:read",
        "devices:write",
        "policies:read",
        "policies:write",
        "users:read",
      ]);
      expect(payload.iat).toBe(nowSeconds);
      expect(payload.exp).toBe(nowSeconds + 86400);
      expect(payload.iss).toBe(t.config.server.base_url);
      expect(payload.jti).toEqual(expect.any(String));

      const second = await t.signIn(operator.email);
      const secondClaims = (
        await jwtVerify(second.token, createLocalJWKSet(jwks.body), { currentDate: t.clock.now() })
      ).payload;
      expect(secondClaims.jti).not.toBe(payload.jti);
    },
  );

  test("a wrong password and an unknown email both answer 401 invalid credentials", async () => {
    const t = await newApp();
    const org = await t.createOrganization();

    const wrongPassword = await login(t, org.adminEmail, "not-the-password");
    const unknownEmail = await login(t, "nobody@example.com", TEST_PASSWORD);

    for (const response of [wrongPassword, unknownEmail]) {
      expect(response.status).toBe(401);
      expect(response.body.code).toBe(401);
      expect(response.body.reason).toBe("invalid_credentials");
      expect(response.body).not.toHaveProperty("token");
    }
    expect(unknownEmail.body.details).toBe(wrongPassword.body.details);
  });

  test("the email is matched without regard to case or surrounding spaces", async () => {
    const t = await newApp();
    const org = await t.createOrganization();

    const response = await login(t, `  ${org.adminEmail.toUpperCase()} `, TEST_PASSWORD);

    expect(response.status).toBe(200);
    expect(response.body.user.email).toBe(org.adminEmail);
  });

  test("a missing password is a 400 naming the field", async () => {
    const t = await newApp();
    const response = await t.request("POST", LOGIN, { body: { email: "someone@example.com" } });
    expect(response.status).toBe(400);
    expect(response.body.code).toBe(400);
    expect(response.body.reason).toBe("validation_failed");
    expect(response.body.details).toContain("password");
  });

  test("a missing email and a non-string email are 400s naming email", async () => {
    const t = await newApp();
    for (const body of [{ password: "x" }, { email: 42, password: "x" }]) {
      const response = await t.request("POST", LOGIN, { body });
      expect(response.status).toBe(400);
      expect(response.body.details).toContain("email");
    }
  });

  test("malformed JSON and a missing body are 400 invalid request body", async () => {
    const t = await newApp();
    const malformed = await t.request("POST", LOGIN, { rawBody: '{"email": "a@example.com", ' });
    expect(malformed.status).toBe(400);
    expect(malformed.body).toMatchObject({ code: 400, reason: "invalid_json" });

    const empty = await t.request("POST", LOGIN);
    expect(empty.status).toBe(400);
    expect(empty.body).toMatchObject({ code: 400, reason: "validation_failed" });
  });
});

describe("login throttle", () => {
  const fromIp = (ip: string) => ({ "x-forwarded-for": ip });

  test("after the maximum failures from one address, sign-in answers 429 for 15 minutes", async () => {
    const t = await newApp({ server: { trust_proxy: true } });
    const org = await t.createOrganization();
    const maxFailures = t.config.auth.login_max_failures;

    for (let attempt = 1; attempt <= maxFailures; attempt++) {
      const failed = await login(t, org.adminEmail, "wrong-password", fromIp("203.0.113.7"));
      expect(failed.status).toBe(401);
    }

    const locked = await login(t, org.adminEmail, "wrong-password", fromIp("203.0.113.7"));
    expect(locked.status).toBe(429);
    expect(locked.body).toMatchObject({
      code: 429,
      message: "Too many login attempts. Please try again in 15 minutes.",
    });
    const retryAfter = Number(locked.headers.get("retry-after"));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(900);

    const correctDuringLockout = await login(t, org.adminEmail, TEST_PASSWORD, fromIp("203.0.113.7"));
    expect(correctDuringLockout.status).toBe(429);
    expect(correctDuringLockout.body).not.toHaveProperty("token");
  });

  test("the lockout is per address and per email", async () => {
    const t = await newApp({ server: { trust_proxy: true } });
    const org = await t.createOrganization();
    const other = await t.createUser(org.adminToken, "member");
    for (let attempt = 0; attempt < t.config.auth.login_max_failures; attempt++) {
      await login(t, org.adminEmail, "wrong-password", fromIp("203.0.113.7"));
    }
    expect((await login(t, org.adminEmail, TEST_PASSWORD, fromIp("203.0.113.7"))).status).toBe(429);

    const otherAddress = await login(t, org.adminEmail, TEST_PASSWORD, fromIp("198.51.100.20"));
    expect(otherAddress.status).toBe(200);
    const otherEmail = await login(t, other.email, TEST_PASSWORD, fromIp("203.0.113.7"));
    expect(otherEmail.status).toBe(200);
  });

  test("forged X-Forwarded-For entries in front of the proxy's own do not escape the lockout", async () => {
    const t = await newApp({ server: { trust_proxy: true } });
    const org = await t.createOrganization();
    for (let attempt = 0; attempt < t.config.auth.login_max_failures; attempt++) {
      await login(t, org.adminEmail, "wrong-password", fromIp(`192.0.2.${attempt}, 203.0.113.7`));
    }
    const forged = await login(t, org.adminEmail, TEST_PASSWORD, fromIp("192.0.2.99, 203.0.113.7"));
    expect(forged.status).toBe(429);
  });

  inProcessTest("once the lockout has passed, the correct password signs in again", async () => {
    const t = await newApp({ server: { trust_proxy: true } });
    const org = await t.createOrganization();
    for (let attempt = 0; attempt < t.config.auth.login_max_failures; attempt++) {
      await login(t, org.adminEmail, "wrong-password", fromIp("203.0.113.7"));
    }
    expect((await login(t, org.adminEmail, TEST_PASSWORD, fromIp("203.0.113.7"))).status).toBe(429);

    t.clock.advanceSeconds(t.config.auth.login_lockout_seconds - 1);
    expect((await login(t, org.adminEmail, TEST_PASSWORD, fromIp("203.0.113.7"))).status).toBe(429);
    t.clock.advanceSeconds(1);
    const after = await login(t, org.adminEmail, TEST_PASSWORD, fromIp("203.0.113.7"));
    expect(after.status).toBe(200);
    expect(after.body.token).toEqual(expect.any(String));
  });

  test("a successful sign-in clears earlier failures", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const maxFailures = t.config.auth.login_max_failures;
    for (let attempt = 1; attempt < maxFailures; attempt++) {
      await login(t, org.adminEmail, "wrong-password");
    }
    expect((await login(t, org.adminEmail, TEST_PASSWORD)).status).toBe(200);
    for (let attempt = 1; attempt < maxFailures; attempt++) {
      expect((await login(t, org.adminEmail, "wrong-password")).status).toBe(401);
    }
    expect((await login(t, org.adminEmail, TEST_PASSWORD)).status).toBe(200);
  });
});

describe("login throttle persistence", () => {
  inProcessTest(
    "the lockout is stored when reached: Retry-After counts down instead of restarting at 900",
    async () => {
      const t = await newApp();
      const org = await t.createOrganization();
      for (let attempt = 0; attempt < 5; attempt++) await login(t, org.adminEmail, `wrong-${attempt}`);
      const first = await login(t, org.adminEmail, TEST_PASSWORD);
      expect(first.status).toBe(429);
      t.clock.advanceSeconds(300);
      const later = await login(t, org.adminEmail, TEST_PASSWORD);
      expect(later.status).toBe(429);
      expect(Number(later.headers.get("retry-after"))).toBeLessThanOrEqual(
        Number(first.headers.get("retry-after")) - 300,
      );
    },
  );

  test("a disabled user's correct password is not counted as a guess", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const member = await t.createUser(org.adminToken, "member");
    await t.request("PATCH", `/api/v1/users/${member.id}`, {
      token: org.adminToken,
      body: { disabled: true },
    });
    for (let attempt = 0; attempt < 7; attempt++)
      expect((await login(t, member.email, TEST_PASSWORD)).status).toBe(401);
    await t.request("PATCH", `/api/v1/users/${member.id}`, {
      token: org.adminToken,
      body: { disabled: false },
    });
    expect((await login(t, member.email, TEST_PASSWORD)).status).toBe(200);
  });
});

describe("login throttle under concurrency", () => {
  test("many simultaneous guesses are counted before the slow hash: at most the maximum are tried", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const guesses = await Promise.all(
      Array.from({ length: 30 }, (_, index) =>
        login(t, org.adminEmail, index === 29 ? TEST_PASSWORD : `guess-${index}`),
      ),
    );
    const statuses = guesses.map((response) => response.status);
    expect(statuses.filter((status) => status === 401).length).toBeLessThanOrEqual(5);
    expect(statuses.filter((status) => status === 429).length).toBeGreaterThanOrEqual(24);
    expect((await login(t, org.adminEmail, TEST_PASSWORD)).status).toBe(429);
  });

  test("a valid token sent along does not lift sign-in to the authenticated rate limit", async () => {
    const t = await newApp({ rate_limit: { unauthenticated_per_minute: 3, authenticated_per_minute: 1000 } });
    const org = await t.createOrganization();
    const statuses: number[] = [];
    for (let attempt = 0; attempt < 5; attempt++) {
      statuses.push(
        (await login(t, "nobody@example.com", "x", { authorization: `Bearer ${org.adminToken}` })).status,
      );
    }
    expect(statuses.slice(-2)).toEqual([429, 429]);
  });
});

describe("POST /auth/refresh", () => {
  test("returns a new token pair; the old refresh token is then refused", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const session = await t.signIn(org.adminEmail);

    const refreshed = await t.request("POST", REFRESH, { body: { refresh_token: session.refresh_token } });
    expect(refreshed.status).toBe(200);
    expect(structuredClone(refreshed.body)).toMatchObject({
      token: expect.any(String),
      refresh_token: expect.any(String),
      expires_in: 86400,
    });
    expect(refreshed.body.refresh_token).not.toBe(session.refresh_token);
    expect(refreshed.body.token).not.toBe(session.token);
    expect((await t.request("GET", ME, { token: refreshed.body.token })).status).toBe(200);

    const again = await t.request("POST", REFRESH, { body: { refresh_token: session.refresh_token } });
    expect(again.status).toBe(401);
    expect(again.body.code).toBe(401);
  });

  test("replaying a used refresh token revokes the whole session", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const session = await t.signIn(org.adminEmail);
    const rotated = await t.request("POST", REFRESH, { body: { refresh_token: session.refresh_token } });
    expect(rotated.status).toBe(200);

    const replay = await t.request("POST", REFRESH, { body: { refresh_token: session.refresh_token } });
    expect(replay.status).toBe(401);

    const newRefresh = await t.request("POST", REFRESH, {
      body: { refresh_token: rotated.body.refresh_token },
    });
    expect(newRefresh.status).toBe(401);
    expect((await t.request("GET", ME, { token: rotated.body.token })).status).toBe(401);
    expect((await t.request("GET", ME, { token: session.token })).status).toBe(401);
    // Other sessions of the same user are untouched.
    expect((await t.request("GET", ME, { token: org.adminToken })).status).toBe(200);
  });

  test("an access token, a garbage string or a missing field is refused", async () => {
    const t = await newApp();
    const org = await t.createOrganization();

    const withAccessToken = await t.request("POST", REFRESH, { body: { refresh_token: org.adminToken } });
    expect(withAccessToken.status).toBe(401);
    const garbage = await t.request("POST", REFRESH, { body: { refresh_token: "not-a-jwt" } });
    expect(garbage.status).toBe(401);
    const missing = await t.request("POST", REFRESH, { body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.details).toContain("refresh_token");
  });

  test("a refresh token of a disabled user is refused", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const member = await t.createUser(org.adminToken, "member");
    await t.request("PATCH", `/api/v1/users/${member.id}`, {
      token: org.adminToken,
      body: { disabled: true },
    });

    const response = await t.request("POST", REFRESH, {
      body: { refresh_token: member.session.refresh_token },
    });
    expect(response.status).toBe(401);
  });
});

describe("POST /auth/logout", () => {
  test("the access token and the refresh token stop working at once", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const session = await t.signIn(org.adminEmail);

    const response = await t.request("POST", LOGOUT, {
      token: session.token,
      body: { refresh_token: session.refresh_token },
    });
    expect(response.status).toBe(200);

    expect((await t.request("GET", ME, { token: session.token })).status).toBe(401);
    const refresh = await t.request("POST", REFRESH, { body: { refresh_token: session.refresh_token } });
    expect(refresh.status).toBe(401);
    // The user's other session is not affected.
    expect((await t.request("GET", ME, { token: org.adminToken })).status).toBe(200);
  });

  test("without a bearer token it is 401", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const response = await t.request("POST", LOGOUT, { body: { refresh_token: org.session.refresh_token } });
    expect(response.status).toBe(401);
    expect(response.body.code).toBe(401);
    expect((await t.request("GET", ME, { token: org.adminToken })).status).toBe(200);
  });

  test("a refresh token of another user in the body does not end that user's session", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const member = await t.createUser(org.adminToken, "member");

    const response = await t.request("POST", LOGOUT, {
      token: member.token,
      body: { refresh_token: org.session.refresh_token },
    });
    expect(response.status).toBe(200);
    expect((await t.request("GET", ME, { token: member.token })).status).toBe(401);
    expect((await t.request("GET", ME, { token: org.adminToken })).status).toBe(200);
    const refresh = await t.request("POST", REFRESH, { body: { refresh_token: org.session.refresh_token } });
    expect(refresh.status).toBe(200);
  });

  test("a refresh_token that is not a string is a 400", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const response = await t.request("POST", LOGOUT, { token: org.adminToken, body: { refresh_token: 7 } });
    expect(response.status).toBe(400);
    expect(response.body.details).toContain("refresh_token");
  });
});

describe("POST /auth/logout with an API key", () => {
  test("is a 400 that points to revoking the key, and the key keeps working", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const key = await t.createApiKey(org.adminToken, ["devices:read"]);
    const response = await t.request("POST", "/api/v1/auth/logout", { token: key, body: {} });
    expect(response.status).toBe(400);
    expect(response.body.details).toContain("/api/v1/auth/api-keys/");
    expect((await t.request("GET", "/api/v1/devices", { token: key })).status).toBe(200);
  });
});

describe("access tokens", () => {
  test("a disabled user's token stops working at once", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const member = await t.createUser(org.adminToken, "member");
    expect((await t.request("GET", ME, { token: member.token })).status).toBe(200);

    const disabled = await t.request("PATCH", `/api/v1/users/${member.id}`, {
      token: org.adminToken,
      body: { disabled: true },
    });
    expect(disabled.status).toBe(200);

    expect((await t.request("GET", ME, { token: member.token })).status).toBe(401);
    expect((await login(t, member.email, TEST_PASSWORD)).status).toBe(401);
  });

  test("a deleted user's token stops working at once", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const member = await t.createUser(org.adminToken, "member");

    const deleted = await t.request("DELETE", `/api/v1/users/${member.id}`, { token: org.adminToken });
    expect(deleted.status).toBe(204);

    expect((await t.request("GET", ME, { token: member.token })).status).toBe(401);
    const signIn = await login(t, member.email, TEST_PASSWORD);
    expect(signIn.status).toBe(401);
    expect(signIn.body.reason).toBe("invalid_credentials");
  });

  test("a refresh token is not accepted as an access token", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const response = await t.request("GET", ME, { token: org.session.refresh_token });
    expect(response.status).toBe(401);
    expect(response.body.code).toBe(401);
  });

  test("a garbage or malformed bearer is 401 JSON", async () => {
    const t = await newApp();
    const attempts: Record<string, string>[] = [
      { authorization: "Bearer not.a.token" },
      { authorization: "Bearer " },
      { authorization: "Basic dXNlcjpwYXNz" },
      { "x-api-key": "garbage" },
    ];
    for (const headers of attempts) {
      const response = await t.request("GET", ME, { headers });
      expect(response.status).toBe(401);
      expect(response.body.code).toBe(401);
      expect(response.body.message).toEqual(expect.any(String));
    }
  });

  test("a token signed by another server is refused", async () => {
    const t = await newApp();
    const other = await newApp();
    const org = await other.createOrganization();
    const response = await t.request("GET", ME, { token: org.adminToken });
    expect(response.status).toBe(401);
  });

  inProcessTest("an access token is refused once it has expired", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    t.clock.advanceSeconds(86400 - 1);
    expect((await t.request("GET", ME, { token: org.adminToken })).status).toBe(200);

    t.clock.advanceSeconds(2);
    const response = await t.request("GET", ME, { token: org.adminToken });
    expect(response.status).toBe(401);
    expect(response.body.code).toBe(401);

    // The refresh token (30 days) still gets a fresh access token.
    const refreshed = await t.request("POST", REFRESH, {
      body: { refresh_token: org.session.refresh_token },
    });
    expect(refreshed.status).toBe(200);
    expect((await t.request("GET", ME, { token: refreshed.body.token })).status).toBe(200);
  });
});
