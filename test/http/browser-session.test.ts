/**
 * Browser sessions (the console's): with `refresh_cookie: true` the refresh token goes into an httpOnly,
 * SameSite=Strict cookie scoped to /api/v1/auth that page scripts cannot read; refresh and sign-out take
 * it from there, and only from this server's own pages (Origin). A marker the page can read
 * (bulwark_signed_in) comes and goes with it.
 */
import { describe, expect, test } from "bun:test";
import { enableTotp, unusedCode } from "../helpers/mfa";
import { freshTestApps, inProcessTest, TEST_PASSWORD, type TestApp } from "../helpers/test-app";

const newApp = freshTestApps();

/** This server's own origin, as its pages have it: the issuer of its tokens (server.base_url). */
function ownOrigin(accessToken: string): string {
  const claims = JSON.parse(Buffer.from(accessToken.split(".")[1] ?? "", "base64url").toString()) as {
    iss: string;
  };
  return new URL(claims.iss).origin;
}

/** A cookie's value and attributes from the Set-Cookie headers (bulwark_refresh unless named). */
function refreshCookie(
  headers: Headers,
  name = "bulwark_refresh",
): { value: string; attributes: string[] } | null {
  const header = headers.getSetCookie().find((cookie) => cookie.startsWith(`${name}=`));
  if (!header) return null;
  const [pair = "", ...attributes] = header.split(";").map((part) => part.trim());
  return { value: pair.slice(`${name}=`.length), attributes };
}

/** The readable marker the console's page checks before it tries a refresh. */
const signedInCookie = (headers: Headers) => refreshCookie(headers, "bulwark_signed_in");

async function cookieSignIn(t: TestApp, email: string) {
  const response = await t.request("POST", "/api/v1/auth/login", {
    body: { email, password: TEST_PASSWORD, refresh_cookie: true },
  });
  expect(response.status).toBe(200);
  return response;
}

/** A refresh as the console's page sends it: the cookie, and the page's Origin (null: none). */
function refreshWithCookie(t: TestApp, cookie: string, origin: string | null) {
  return t.request("POST", "/api/v1/auth/refresh", {
    body: {},
    headers: { cookie: `theme=dark; bulwark_refresh=${cookie}`, ...(origin !== null ? { origin } : {}) },
  });
}

describe("browser sessions", () => {
  test("a sign-in that asks for the cookie gets it, httpOnly and SameSite=Strict, and no refresh token in the body", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const response = await cookieSignIn(t, org.adminEmail);
    expect(response.body.refresh_token).toBeUndefined();
    expect(response.body).toMatchObject({
      refresh_cookie: true,
      token_type: "Bearer",
      user: { email: org.adminEmail },
    });
    const cookie = refreshCookie(response.headers);
    expect(cookie?.value).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    expect(cookie?.attributes).toEqual(
      expect.arrayContaining(["Path=/api/v1/auth", "HttpOnly", "SameSite=Strict", "Max-Age=2592000"]),
    );
    // Served over http here (base_url), so not Secure: a browser would refuse to store it.
    expect(cookie?.attributes).not.toContain("Secure");
    // The access token works as any other.
    expect((await t.request("GET", "/api/v1/users/me", { token: response.body.token })).status).toBe(200);
  });

  test("beside it, a marker the console's page can read says a session is there, holding no secret", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const response = await cookieSignIn(t, org.adminEmail);
    const marker = signedInCookie(response.headers);
    expect(marker?.value).toBe("1");
    expect(marker?.attributes).toEqual(
      expect.arrayContaining(["Path=/console", "SameSite=Strict", "Max-Age=2592000"]),
    );
    // Readable by the page's script (that is its purpose), so it must not be the refresh token.
    expect(marker?.attributes).not.toContain("HttpOnly");
    expect(marker?.value).not.toBe(refreshCookie(response.headers)?.value);
    // Renewed at every refresh by cookie, for as long as the refresh cookie.
    const refreshed = await refreshWithCookie(
      t,
      refreshCookie(response.headers)?.value ?? "",
      ownOrigin(response.body.token),
    );
    expect(signedInCookie(refreshed.headers)).toEqual(marker);
    // A sign-in that keeps its refresh token in the body sets neither.
    const scripted = await t.request("POST", "/api/v1/auth/login", {
      body: { email: org.adminEmail, password: TEST_PASSWORD },
    });
    expect(scripted.headers.getSetCookie()).toEqual([]);
  });

  test("over https the cookie is Secure", async () => {
    const t = await newApp({ server: { base_url: "https://bulwark.example.com" } });
    const org = await t.createOrganization();
    const signedIn = await cookieSignIn(t, org.adminEmail);
    expect(refreshCookie(signedIn.headers)?.attributes).toContain("Secure");
    expect(signedInCookie(signedIn.headers)?.attributes).toContain("Secure");
  });

  test("a refresh by cookie from the console's page rotates the cookie", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const signedIn = await cookieSignIn(t, org.adminEmail);
    const origin = ownOrigin(signedIn.body.token);
    const first = refreshCookie(signedIn.headers)?.value ?? "";

    const refreshed = await refreshWithCookie(t, first, origin);
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.refresh_token).toBeUndefined();
    expect(refreshed.body.refresh_cookie).toBe(true);
    const second = refreshCookie(refreshed.headers)?.value ?? "";
    expect(second).not.toBe(first);
    expect((await t.request("GET", "/api/v1/users/me", { token: refreshed.body.token })).status).toBe(200);
    expect((await refreshWithCookie(t, second, origin)).status).toBe(200);
  });

  test("a page reloaded while its refresh was in flight gets a new cookie, and the answer it lost ends", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const signedIn = await cookieSignIn(t, org.adminEmail);
    const origin = ownOrigin(signedIn.body.token);
    const first = refreshCookie(signedIn.headers)?.value ?? "";
    // The answer carrying `lost` never reached the browser, which still holds `first`.
    const lost = refreshCookie((await refreshWithCookie(t, first, origin)).headers)?.value ?? "";

    const retried = await refreshWithCookie(t, first, origin);
    expect(retried.status).toBe(200);
    const kept = refreshCookie(retried.headers)?.value ?? "";
    expect((await t.request("GET", "/api/v1/users/me", { token: retried.body.token })).status).toBe(200);
    // One live refresh token per session: the lost one no longer works, the new one does.
    expect((await refreshWithCookie(t, lost, origin)).status).toBe(401);
    expect((await refreshWithCookie(t, kept, origin)).status).toBe(200);
  });

  test("two tabs reloaded at once while a refresh was in flight: both get in, and the session keeps one live refresh token", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const signedIn = await cookieSignIn(t, org.adminEmail);
    const origin = ownOrigin(signedIn.body.token);
    const first = refreshCookie(signedIn.headers)?.value ?? "";
    await refreshWithCookie(t, first, origin); // its answer was lost

    const retries = await Promise.all([
      refreshWithCookie(t, first, origin),
      refreshWithCookie(t, first, origin),
    ]);
    expect(retries.map((retry) => retry.status)).toEqual([200, 200]);
    const cookies = retries.map((retry) => refreshCookie(retry.headers)?.value ?? "");
    // One of the two replaced the other: a session never holds two live refresh tokens.
    const uses = [];
    for (const cookie of cookies) uses.push((await refreshWithCookie(t, cookie, origin)).status);
    expect(uses.sort()).toEqual([200, 401]);
  });

  test("a used cookie whose replacement was used is theft: the whole session ends", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const signedIn = await cookieSignIn(t, org.adminEmail);
    const origin = ownOrigin(signedIn.body.token);
    const first = refreshCookie(signedIn.headers)?.value ?? "";
    const second = refreshCookie((await refreshWithCookie(t, first, origin)).headers)?.value ?? "";
    const third = await refreshWithCookie(t, second, origin);
    expect(third.status).toBe(200);

    const replay = await refreshWithCookie(t, first, origin);
    expect(replay.status).toBe(401);
    expect(replay.body.reason).toBe("refresh_token_reused");
    expect((await refreshWithCookie(t, refreshCookie(third.headers)?.value ?? "", origin)).status).toBe(401);
    expect((await t.request("GET", "/api/v1/users/me", { token: third.body.token })).status).toBe(401);
  });

  inProcessTest(
    "a used cookie presented more than 30 seconds later is theft, and in the body never retries",
    async () => {
      const t = await newApp();
      const org = await t.createOrganization();
      const signedIn = await cookieSignIn(t, org.adminEmail);
      const origin = ownOrigin(signedIn.body.token);
      const first = refreshCookie(signedIn.headers)?.value ?? "";
      await refreshWithCookie(t, first, origin);
      t.clock.advanceSeconds(31);
      const late = await refreshWithCookie(t, first, origin);
      expect(late.status).toBe(401);
      expect(late.body.reason).toBe("refresh_token_reused");

      // A script's refresh token (in the body) has no such window: presented again, the session ends.
      const pair = (await t.signIn(org.adminEmail)) as { refresh_token: string };
      await t.request("POST", "/api/v1/auth/refresh", { body: { refresh_token: pair.refresh_token } });
      const again = await t.request("POST", "/api/v1/auth/refresh", {
        body: { refresh_token: pair.refresh_token },
      });
      expect(again.body.reason).toBe("refresh_token_reused");
    },
  );

  test("a refresh by cookie from another site, or with no Origin, is refused and uses nothing up", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const signedIn = await cookieSignIn(t, org.adminEmail);
    const cookie = refreshCookie(signedIn.headers)?.value ?? "";
    const ownPage = ownOrigin(signedIn.body.token);
    const port = new URL(ownPage).port;
    for (const origin of [
      "https://evil.example",
      `http://localhost:${Number(port || 80) + 1}`,
      "null",
      null,
    ]) {
      const response = await refreshWithCookie(t, cookie, origin);
      expect(response.status).toBe(403);
      expect(response.body.reason).toBe("cross_site_request");
    }
    // The cookie was not used up by the refused attempts.
    expect((await refreshWithCookie(t, cookie, ownPage)).status).toBe(200);
  });

  test("a refresh with neither a body token nor the cookie names the missing refresh_token", async () => {
    const t = await newApp();
    const response = await t.request("POST", "/api/v1/auth/refresh", {
      body: {},
      headers: { origin: "http://localhost:8080" },
    });
    expect(response.status).toBe(400);
    expect(response.body.details).toContain("refresh_token");
  });

  test("signing out with the cookie ends the session and clears the cookie", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const signedIn = await cookieSignIn(t, org.adminEmail);
    const cookie = refreshCookie(signedIn.headers)?.value ?? "";
    const logout = await t.request("POST", "/api/v1/auth/logout", {
      token: signedIn.body.token,
      headers: { cookie: `bulwark_refresh=${cookie}` },
    });
    expect(logout.status).toBe(200);
    expect(refreshCookie(logout.headers)).toEqual({
      value: "",
      attributes: expect.arrayContaining(["Max-Age=0", "Path=/api/v1/auth"]),
    });
    // The page's marker goes with it: a reload goes to sign-in without trying a refresh.
    expect(signedInCookie(logout.headers)).toEqual({
      value: "",
      attributes: expect.arrayContaining(["Max-Age=0", "Path=/console"]),
    });
    expect((await refreshWithCookie(t, cookie, ownOrigin(signedIn.body.token))).status).toBe(401);
    expect((await t.request("GET", "/api/v1/users/me", { token: signedIn.body.token })).status).toBe(401);
  });

  test("the second factor's answer delivers the cookie the same way", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const { secret } = await enableTotp(t, org.adminToken);
    const challenge = await cookieSignIn(t, org.adminEmail);
    expect(challenge.body.mfa_required).toBe(true);
    expect(refreshCookie(challenge.headers)).toBeNull();
    const verified = await t.request("POST", "/api/v1/auth/mfa/verify", {
      body: {
        mfa_token: challenge.body.mfa_token,
        method: "totp",
        code: unusedCode(t, secret),
        refresh_cookie: true,
      },
    });
    expect(verified.status).toBe(200);
    expect(verified.body.refresh_token).toBeUndefined();
    const cookie = refreshCookie(verified.headers)?.value ?? "";
    expect((await refreshWithCookie(t, cookie, ownOrigin(verified.body.token))).status).toBe(200);
  });

  test("without refresh_cookie nothing changes: the refresh token is in the body and no cookie is set", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const response = await t.request("POST", "/api/v1/auth/login", {
      body: { email: org.adminEmail, password: TEST_PASSWORD },
    });
    expect(typeof response.body.refresh_token).toBe("string");
    expect(refreshCookie(response.headers)).toBeNull();
  });
});
