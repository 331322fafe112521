/**
 * Multi-factor sign-in through the HTTP API: TOTP enrolment and confirmation, the sign-in challenge,
 * recovery codes, the limits on mfa_tokens and wrong codes, management, an administrator's reset and
 * lockout lift, and the organization's require_mfa. TOTP codes are computed by test/helpers/totp.ts
 * (node:crypto, RFC 6238), not by the library the server uses.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { enableTotp, unusedCode } from "../helpers/mfa";
import { dumpPgDatabase } from "../helpers/pg-stores";
import { expectServerErrors } from "../helpers/server-errors";
import { freshTestApps, inProcessTest, TEST_PASSWORD, type TestApp } from "../helpers/test-app";
import { base32Decode, hotp, totpCode } from "../helpers/totp";

const LOGIN = "/api/v1/auth/login";
const VERIFY = "/api/v1/auth/mfa/verify";
const MFA = "/api/v1/auth/mfa";

const newApp = freshTestApps({ rate_limit: { unauthenticated_per_minute: 10_000 } });

function login(t: TestApp, email: string, password = TEST_PASSWORD) {
  return t.request("POST", LOGIN, { body: { email, password } });
}

function verify(t: TestApp, mfaToken: string, method: string, code: string) {
  return t.request("POST", VERIFY, { body: { mfa_token: mfaToken, method, code } });
}

/** An organization whose admin has an authenticator app; returns what the tests need. */
async function adminWithTotp(t: TestApp) {
  const org = await t.createOrganization();
  const totp = await enableTotp(t, org.adminToken);
  return { ...org, ...totp };
}

async function challenge(t: TestApp, email: string): Promise<string> {
  const response = await login(t, email);
  expect(response.status).toBe(200);
  expect(response.body.mfa_required).toBe(true);
  return response.body.mfa_token;
}

async function auditActions(t: TestApp, token: string, action: string) {
  const response = await t.request("GET", `/api/v1/audit-logs?action=${action}&page_size=100`, { token });
  expect(response.status).toBe(200);
  return response.body.data as { action: string; outcome: string; details: Record<string, unknown> }[];
}

test("the test's own TOTP matches RFC 6238's published SHA-1 vectors", () => {
  // RFC 6238 appendix B: the 20-byte ASCII key "12345678901234567890", 8 digits.
  const key = Buffer.from("12345678901234567890");
  expect(hotp(key, Math.floor(59 / 30), 8)).toBe("94287082");
  expect(hotp(key, Math.floor(1111111109 / 30), 8)).toBe("07081804");
  expect(hotp(key, Math.floor(2000000000 / 30), 8)).toBe("69279037");
  expect(base32Decode("GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ").toString()).toBe("12345678901234567890");
});

describe("TOTP enrolment", () => {
  test("gives a base32 secret, its otpauth URL and an SVG QR code; nothing is enabled before confirmation", async () => {
    const t = await newApp();
    const org = await t.createOrganization();

    const enrolment = await t.request("POST", `${MFA}/totp`, { token: org.adminToken });

    expect(enrolment.status).toBe(200);
    expect(enrolment.body.secret).toMatch(/^[A-Z2-7]{32}$/);
    const url = new URL(enrolment.body.otpauth_url);
    expect(url.protocol).toBe("otpauth:");
    expect(url.host).toBe("totp");
    expect(decodeURIComponent(url.pathname)).toBe(`/Bulwark:${org.adminEmail}`);
    expect(url.searchParams.get("secret")).toBe(enrolment.body.secret);
    expect(url.searchParams.get("issuer")).toBe("Bulwark");
    expect(enrolment.body.qr_svg).toStartWith("<svg");
    expect(enrolment.headers.get("cache-control")).toBe("no-store");

    const status = await t.request("GET", MFA, { token: org.adminToken });
    expect(status.body).toEqual({ enabled: false, methods: [], recovery_codes_remaining: 0 });
    const signIn = await login(t, org.adminEmail);
    expect(signIn.body.token).toBeString();
  });

  test("a wrong code is a 400 naming the field; the current code enables MFA and shows 10 recovery codes once", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const { secret } = (await t.request("POST", `${MFA}/totp`, { token: org.adminToken })).body;
    const right = totpCode(secret, t.now());
    const wrong = right === "000000" ? "111111" : "000000";

    const refused = await t.request("POST", `${MFA}/totp/confirm`, {
      token: org.adminToken,
      body: { code: wrong },
    });
    expect(refused.status).toBe(400);
    expect(refused.body.reason).toBe("mfa_code_invalid");
    expect(refused.body.errors[0].field).toBe("code");

    const confirmed = await t.request("POST", `${MFA}/totp/confirm`, {
      token: org.adminToken,
      body: { code: right },
    });
    expect(confirmed.status).toBe(200);
    expect(confirmed.body.enabled).toBe(true);
    expect(confirmed.body.recovery_codes).toHaveLength(10);
    expect(new Set(confirmed.body.recovery_codes).size).toBe(10);
    for (const code of confirmed.body.recovery_codes) expect(code).toMatch(/^[a-z2-9]{5}-[a-z2-9]{5}$/);

    const status = await t.request("GET", MFA, { token: org.adminToken });
    expect(status.body.enabled).toBe(true);
    expect(status.body.recovery_codes_remaining).toBe(10);
    expect(status.body.methods).toEqual([
      {
        id: expect.any(String),
        type: "totp",
        name: "Authenticator app",
        created_at: expect.any(String),
        last_used_at: expect.any(String),
      },
    ]);
    expect(JSON.stringify(status.body)).not.toContain(secret);
    const me = await t.request("GET", "/api/v1/users/me", { token: org.adminToken });
    expect(me.body.mfa_enabled).toBe(true);
  });

  test("a second app while one is set up is a 409; confirming with nothing pending is a 409", async () => {
    const t = await newApp();
    const org = await adminWithTotp(t);

    const again = await t.request("POST", `${MFA}/totp`, { token: org.adminToken });
    expect(again.status).toBe(409);
    expect(again.body.reason).toBe("totp_already_enabled");
    const reconfirm = await t.request("POST", `${MFA}/totp/confirm`, {
      token: org.adminToken,
      body: { code: "123456" },
    });
    expect(reconfirm.status).toBe(409);
    expect(reconfirm.body.reason).toBe("totp_already_enabled");

    const other = await t.createOrganization();
    const nothing = await t.request("POST", `${MFA}/totp/confirm`, {
      token: other.adminToken,
      body: { code: "123456" },
    });
    expect(nothing.status).toBe(409);
    expect(nothing.body.reason).toBe("totp_enrolment_missing");
  });
});

inProcessTest(
  "the TOTP secret is nowhere in the database (file and WAL, or PostgreSQL's dump), only in sealed form",
  async () => {
    const folder = mkdtempSync(join(tmpdir(), "bulwark-mfa-"));
    try {
      const path = join(folder, "bulwark.db");
      const t = await newApp({ database: { path } });
      const org = await t.createOrganization();
      const { secret } = await enableTotp(t, org.adminToken);
      // The code still verifies: the server reads the secret back through the key file.
      expect(
        (await verify(t, await challenge(t, org.adminEmail), "totp", unusedCode(t, secret))).status,
      ).toBe(200);

      const raw = base32Decode(secret);
      // SQLite: the file and its WAL; PostgreSQL: everything pg_dump reads out of the database.
      const stored =
        t.store === "postgresql"
          ? [{ file: "pg_dump", bytes: dumpPgDatabase(t.config.database.url) }]
          : [path, `${path}-wal`].filter(existsSync).map((file) => ({ file, bytes: readFileSync(file) }));
      if (t.store === "sqlite") expect(stored.map(({ file }) => file)).toContain(`${path}-wal`);
      for (const { file, bytes } of stored) {
        expect(bytes.includes(Buffer.from(secret)), `${file} holds the base32 secret`).toBe(false);
        expect(bytes.includes(Buffer.from(secret.toLowerCase())), file).toBe(false);
        expect(bytes.includes(raw), `${file} holds the raw secret`).toBe(false);
        expect(bytes.includes(Buffer.from(raw.toString("hex"))), file).toBe(false);
        expect(bytes.includes(Buffer.from(raw.toString("base64"))), file).toBe(false);
      }
      // Stored, sealed (in the WAL until a checkpoint moves it to the main file).
      expect(stored.some(({ bytes }) => bytes.includes(Buffer.from("sealed:v1:")))).toBe(true);
      expect(statSync(`${path}.key`).mode & 0o777).toBe(0o600);
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  },
);

inProcessTest(
  "restored without its key file, the app's codes answer 503 instead of counting as wrong; an admin reset lets the user in",
  async () => {
    const folder = mkdtempSync(join(tmpdir(), "bulwark-mfa-"));
    try {
      const path = join(folder, "bulwark.db");
      const before = await newApp({ database: { path } });
      const org = await before.createOrganization();
      const user = await before.createUser(org.adminToken, "operator");
      const { secret } = await enableTotp(before, user.token);
      await before.close();
      rmSync(`${path}.key`);

      // On PostgreSQL, where every server on the database must hold the same key, one without it
      // refuses to start, naming its key file, and writes no new key there (src/boot.ts).
      if (before.store === "postgresql") {
        await expect(newApp({ database: { path } })).rejects.toThrow(
          `${path}.key does not exist, and postgresql://`,
        );
        expect(existsSync(`${path}.key`)).toBe(false);
        return;
      }
      const t = await newApp({ database: { path } });
      t.clock.advanceSeconds(60);
      expectServerErrors(503);
      const unreadable = await verify(t, await challenge(t, user.email), "totp", totpCode(secret, t.now()));
      expect(unreadable.status).toBe(503);
      expect(unreadable.body.reason).toBe("totp_secret_unreadable");

      const admin = await t.signIn(org.adminEmail);
      expect((await t.request("DELETE", `/api/v1/users/${user.id}/mfa`, { token: admin.token })).status).toBe(
        204,
      );
      expect((await login(t, user.email)).body.token).toBeString();
    } finally {
      rmSync(folder, { recursive: true, force: true });
    }
  },
);

describe("sign-in with a second factor", () => {
  test("login answers a challenge and no tokens; verify answers exactly as a login does", async () => {
    const t = await newApp();
    const org = await adminWithTotp(t);

    const first = await login(t, org.adminEmail);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      mfa_required: true,
      mfa_token: expect.any(String),
      mfa_methods: ["totp"],
      expires_in: 300,
    });

    const second = await verify(t, first.body.mfa_token, "totp", unusedCode(t, org.secret));
    expect(second.status).toBe(200);
    expect(structuredClone(second.body)).toMatchObject({
      token: expect.any(String),
      refresh_token: expect.any(String),
      expires_in: 86400,
      token_type: "Bearer",
      user: { id: org.adminId, email: org.adminEmail, role: "admin", organization_id: org.organizationId },
    });
    const me = await t.request("GET", "/api/v1/users/me", { token: second.body.token });
    expect(me.status).toBe(200);
    const refreshed = await t.request("POST", "/api/v1/auth/refresh", {
      body: { refresh_token: second.body.refresh_token },
    });
    expect(refreshed.status).toBe(200);
    expect(refreshed.body.token).toBeString();
  });

  test("the mfa_token is never a bearer token, and works once", async () => {
    const t = await newApp();
    const org = await adminWithTotp(t);
    const mfaToken = await challenge(t, org.adminEmail);

    const asBearer = await t.request("GET", "/api/v1/users/me", { token: mfaToken });
    expect(asBearer.status).toBe(401);

    const code = unusedCode(t, org.secret);
    expect((await verify(t, mfaToken, "totp", code)).status).toBe(200);
    const again = await verify(t, mfaToken, "recovery_code", org.recoveryCodes[0] as string);
    expect(again.status).toBe(401);
    expect(again.body.reason).toBe("mfa_token_invalid");
  });

  test("a code is accepted once: the same code on the next sign-in is refused as reused", async () => {
    const t = await newApp();
    const org = await adminWithTotp(t);
    const code = unusedCode(t, org.secret);
    expect((await verify(t, await challenge(t, org.adminEmail), "totp", code)).status).toBe(200);

    const replay = await verify(t, await challenge(t, org.adminEmail), "totp", code);

    expect(replay.status).toBe(401);
    expect(replay.body.reason).toBe("mfa_code_reused");
  });

  inProcessTest("one step of clock drift either way is accepted, two steps are not", async () => {
    const t = await newApp();
    const org = await adminWithTotp(t);
    const attempt = async (offset: number) => {
      t.clock.advanceSeconds(120); // past every step used so far
      return (
        await verify(t, await challenge(t, org.adminEmail), "totp", totpCode(org.secret, t.now(), offset))
      ).status;
    };

    expect(await attempt(-1)).toBe(200);
    expect(await attempt(1)).toBe(200);
    expect(await attempt(-2)).toBe(401);
    expect(await attempt(2)).toBe(401);
    expect(await attempt(0)).toBe(200);
  });

  inProcessTest("the mfa_token lives 5 minutes", async () => {
    const t = await newApp();
    const org = await adminWithTotp(t);
    const mfaToken = await challenge(t, org.adminEmail);

    t.clock.advanceSeconds(301);
    const late = await verify(t, mfaToken, "totp", totpCode(org.secret, t.now()));

    expect(late.status).toBe(401);
    expect(late.body.reason).toBe("mfa_token_invalid");
    expect(late.body.details).toContain("expired");
  });

  test("5 wrong codes kill the mfa_token and lock sign-in like 5 wrong passwords; an admin lifts the lockout", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const user = await t.createUser(org.adminToken, "operator");
    const { secret } = await enableTotp(t, user.token);
    const mfaToken = await challenge(t, user.email);
    const right = unusedCode(t, secret);
    const wrong = right === "999999" ? "888888" : "999999";

    for (let attempt = 1; attempt <= 5; attempt++) {
      const response = await verify(t, mfaToken, "totp", wrong);
      expect(response.status).toBe(401);
      expect(response.body.reason).toBe("mfa_code_invalid");
    }
    const dead = await verify(t, mfaToken, "totp", right);
    expect(dead.status).toBe(401);
    expect(dead.body.reason).toBe("mfa_token_invalid");

    const locked = await login(t, user.email);
    expect(locked.status).toBe(429);
    expect(locked.body.message).toBe("Too many login attempts. Please try again in 15 minutes.");
    expect(Number(locked.headers.get("retry-after"))).toBeGreaterThan(0);

    const member = await t.createUser(org.adminToken, "member");
    expect(
      (await t.request("DELETE", `/api/v1/users/${user.id}/lockout`, { token: member.token })).status,
    ).toBe(403);
    const lifted = await t.request("DELETE", `/api/v1/users/${user.id}/lockout`, { token: org.adminToken });
    expect(lifted.status).toBe(204);
    const again = await login(t, user.email);
    expect(again.status).toBe(200);
    expect(again.body.mfa_required).toBe(true);
    const cleared = await auditActions(t, org.adminToken, "user.lockout_clear");
    expect(cleared).toHaveLength(1);
  });

  test("wrong passwords and wrong codes add up toward the same lockout", async () => {
    const t = await newApp();
    const org = await adminWithTotp(t);
    for (let attempt = 0; attempt < 3; attempt++)
      expect((await login(t, org.adminEmail, "wrong-password-123")).status).toBe(401);
    const mfaToken = await challenge(t, org.adminEmail);
    for (let attempt = 0; attempt < 2; attempt++)
      expect((await verify(t, mfaToken, "recovery_code", "aaaaa-aaaaa")).status).toBe(401);

    expect((await login(t, org.adminEmail)).status).toBe(429);
  });

  test("signing in again does not wipe the wrong codes counted so far", async () => {
    const t = await newApp();
    const org = await adminWithTotp(t);
    for (let round = 0; round < 2; round++) {
      const mfaToken = await challenge(t, org.adminEmail);
      for (let attempt = 0; attempt < 2; attempt++)
        expect((await verify(t, mfaToken, "recovery_code", "aaaaa-aaaaa")).status).toBe(401);
    }
    const mfaToken = await challenge(t, org.adminEmail);
    expect((await verify(t, mfaToken, "recovery_code", "aaaaa-aaaaa")).status).toBe(401);

    expect((await login(t, org.adminEmail)).status).toBe(429);
  });

  test("a method the user does not have is a 400 and costs no attempt", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const user = await t.createUser(org.adminToken, "member");
    await enableTotp(t, user.token);
    const mfaToken = await challenge(t, user.email);

    for (let attempt = 0; attempt < 6; attempt++) {
      const response = await verify(t, mfaToken, "webauthn", "{}");
      expect(response.status).toBe(400);
    }
    const options = await t.request("POST", `${MFA}/webauthn/authentication-options`, {
      body: { mfa_token: mfaToken },
    });
    expect(options.status).toBe(400);
    expect(options.body.reason).toBe("mfa_method_not_enrolled");
    const still = await login(t, user.email);
    expect(still.status).toBe(200);
    expect(still.body.mfa_required).toBe(true);
  });

  test("codes that cannot be right are a 400 naming the field and cost no attempt", async () => {
    const t = await newApp();
    const org = await adminWithTotp(t);
    const mfaToken = await challenge(t, org.adminEmail);
    for (const [method, code] of [
      ["totp", "12345"],
      ["totp", "abcdef"],
      ["totp", "١٢٣٤٥٦"],
      ["recovery_code", "0000-1111"],
    ] as const) {
      const response = await verify(t, mfaToken, method, code);
      expect(response.status, `${method} ${code}`).toBe(400);
      expect(response.body.errors[0].field).toBe("code");
    }
    for (let attempt = 0; attempt < 3; attempt++) await verify(t, mfaToken, "totp", "12345");

    expect((await verify(t, mfaToken, "totp", unusedCode(t, org.secret))).status).toBe(200);
  });

  test("the 401 for a wrong code says how many tries are left before sign-in locks", async () => {
    const t = await newApp();
    const org = await adminWithTotp(t);
    await login(t, org.adminEmail, "wrong-password-123");
    await login(t, org.adminEmail, "wrong-password-123");
    const mfaToken = await challenge(t, org.adminEmail);

    const wrong = await verify(t, mfaToken, "recovery_code", "aaaaa-aaaaa");

    expect(wrong.body.details).toBe("the code is not right; 2 more attempts before sign-in locks");
  });

  test("changing the password ends a sign-in still waiting for its second factor", async () => {
    const t = await newApp();
    const org = await adminWithTotp(t);
    const mfaToken = await challenge(t, org.adminEmail);

    const changed = await t.request("PUT", "/api/v1/users/me/password", {
      token: org.adminToken,
      body: { current_password: TEST_PASSWORD, new_password: "a-brand-new-password" },
    });
    expect(changed.status).toBe(200);

    const late = await verify(t, mfaToken, "recovery_code", org.recoveryCodes[0] as string);
    expect(late.status).toBe(401);
    expect(late.body.reason).toBe("mfa_token_invalid");
  });

  test("refused attempts are audited too: a used token, and a locked-out sign-in", async () => {
    const t = await newApp();
    const org = await adminWithTotp(t);
    const used = await challenge(t, org.adminEmail);
    const signedIn = await verify(t, used, "recovery_code", org.recoveryCodes[0] as string);
    expect(signedIn.status).toBe(200);
    expect((await verify(t, used, "recovery_code", org.recoveryCodes[1] as string)).status).toBe(401);
    const pending = await challenge(t, org.adminEmail);
    for (let attempt = 0; attempt < 5; attempt++) await login(t, org.adminEmail, "wrong-password-123");
    expect((await verify(t, pending, "recovery_code", org.recoveryCodes[2] as string)).status).toBe(429);

    const reasons = (await auditActions(t, signedIn.body.token, "auth.mfa_verify"))
      .filter((entry) => entry.outcome === "failure")
      .map((entry) => entry.details.reason)
      .sort();
    expect(reasons).toEqual(["login_throttled", "mfa_token_invalid"]);
  });

  test("every verify attempt is in the audit log, with its outcome and method", async () => {
    const t = await newApp();
    const org = await adminWithTotp(t);
    const mfaToken = await challenge(t, org.adminEmail);
    await verify(t, mfaToken, "recovery_code", "aaaaa-aaaaa");
    const signedIn = await verify(t, mfaToken, "totp", unusedCode(t, org.secret));
    expect(signedIn.status).toBe(200);

    const entries = await auditActions(t, signedIn.body.token, "auth.mfa_verify");
    expect(entries.map((entry) => [entry.outcome, entry.details.method]).sort()).toEqual([
      ["failure", "recovery_code"],
      ["success", "totp"],
    ]);
  });
});

test("passkeys need a host name in base_url: with an IP address the options answer 503, not options a browser refuses", async () => {
  const t = await newApp({ server: { base_url: "http://192.0.2.10:8080" } });
  const org = await t.createOrganization();
  expectServerErrors(503);

  const options = await t.request("POST", `${MFA}/webauthn/registration-options`, { token: org.adminToken });

  expect(options.status).toBe(503);
  expect(options.body.reason).toBe("webauthn_unavailable");
  expect(options.body.details).toContain("192.0.2.10");
});

describe("recovery codes", () => {
  test("each code signs in once, in any case and with or without its dash", async () => {
    const t = await newApp();
    const org = await adminWithTotp(t);
    const [first, second] = org.recoveryCodes as [string, string];

    const used = await verify(t, await challenge(t, org.adminEmail), "recovery_code", first);
    expect(used.status).toBe(200);
    const again = await verify(t, await challenge(t, org.adminEmail), "recovery_code", first);
    expect(again.status).toBe(401);
    const typed = await verify(
      t,
      await challenge(t, org.adminEmail),
      "recovery_code",
      second.replace("-", " ").toUpperCase(),
    );
    expect(typed.status).toBe(200);

    const status = await t.request("GET", MFA, { token: typed.body.token });
    expect(status.body.recovery_codes_remaining).toBe(8);
  });

  test("two codes sent at once for one sign-in: one signs in, and only its code is used up", async () => {
    const t = await newApp();
    const org = await adminWithTotp(t);
    const [first, second] = org.recoveryCodes as [string, string];
    const mfaToken = await challenge(t, org.adminEmail);
    const answers = await Promise.all([
      verify(t, mfaToken, "recovery_code", first),
      verify(t, mfaToken, "recovery_code", second),
    ]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([200, 401]);
    const signedIn = answers.find((answer) => answer.status === 200);
    const refused = answers.find((answer) => answer.status === 401);
    expect(refused?.body.reason).toBe("mfa_token_invalid");
    const status = await t.request("GET", MFA, { token: signedIn?.body.token });
    expect(status.body.recovery_codes_remaining).toBe(9);
    // The refused one's code still signs in.
    const kept = answers[0]?.status === 401 ? first : second;
    expect((await verify(t, await challenge(t, org.adminEmail), "recovery_code", kept)).status).toBe(200);
  });

  test("new codes need the password and replace the old set", async () => {
    const t = await newApp();
    const org = await adminWithTotp(t);

    const wrong = await t.request("POST", `${MFA}/recovery-codes`, {
      token: org.adminToken,
      body: { password: "not-the-password" },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body.reason).toBe("password_incorrect");

    const renewed = await t.request("POST", `${MFA}/recovery-codes`, {
      token: org.adminToken,
      body: { password: TEST_PASSWORD },
    });
    expect(renewed.status).toBe(200);
    expect(renewed.body.recovery_codes).toHaveLength(10);
    const old = await verify(
      t,
      await challenge(t, org.adminEmail),
      "recovery_code",
      org.recoveryCodes[0] as string,
    );
    expect(old.status).toBe(401);
    const fresh = await verify(
      t,
      await challenge(t, org.adminEmail),
      "recovery_code",
      renewed.body.recovery_codes[0],
    );
    expect(fresh.status).toBe(200);
  });

  test("without MFA there are no codes to renew (409)", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const response = await t.request("POST", `${MFA}/recovery-codes`, {
      token: org.adminToken,
      body: { password: TEST_PASSWORD },
    });
    expect(response.status).toBe(409);
    expect(response.body.reason).toBe("mfa_not_enabled");
  });
});

describe("managing factors", () => {
  test("removing the last factor needs the password and turns MFA off with its recovery codes", async () => {
    const t = await newApp();
    const org = await adminWithTotp(t);

    const wrong = await t.request("DELETE", `${MFA}/${org.methodId}`, {
      token: org.adminToken,
      body: { password: "not-the-password" },
    });
    expect(wrong.status).toBe(401);
    expect(wrong.body.reason).toBe("password_incorrect");

    const removed = await t.request("DELETE", `${MFA}/${org.methodId}`, {
      token: org.adminToken,
      body: { password: TEST_PASSWORD },
    });
    expect(removed.status).toBe(204);
    const status = await t.request("GET", MFA, { token: org.adminToken });
    expect(status.body).toEqual({ enabled: false, methods: [], recovery_codes_remaining: 0 });
    const signIn = await login(t, org.adminEmail);
    expect(signIn.body.token).toBeString();
    expect(signIn.body.mfa_required).toBeUndefined();
    const entries = await auditActions(t, org.adminToken, "mfa.method_delete");
    expect(entries.map((entry) => entry.outcome).sort()).toEqual(["failure", "success"]);
  });

  test("another user's method is a 404", async () => {
    const t = await newApp();
    const org = await adminWithTotp(t);
    const other = await t.createUser(org.adminToken, "admin");
    const response = await t.request("DELETE", `${MFA}/${org.methodId}`, {
      token: other.token,
      body: { password: TEST_PASSWORD },
    });
    expect(response.status).toBe(404);
    expect(response.body.reason).toBe("mfa_method_not_found");
  });

  test("an administrator removes a user's factors (lost phone); another organization's user is a 404", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const user = await t.createUser(org.adminToken, "operator");
    await enableTotp(t, user.token);
    const operator = await t.createUser(org.adminToken, "operator");

    expect(
      (await t.request("DELETE", `/api/v1/users/${user.id}/mfa`, { token: operator.token })).status,
    ).toBe(403);
    // Not one's own: those go one at a time, with the password.
    const own = await t.request("DELETE", `/api/v1/users/${org.adminId}/mfa`, { token: org.adminToken });
    expect(own.status).toBe(403);
    expect(own.body.reason).toBe("own_mfa_reset");
    const reset = await t.request("DELETE", `/api/v1/users/${user.id}/mfa`, { token: org.adminToken });
    expect(reset.status).toBe(204);
    const signIn = await login(t, user.email);
    expect(signIn.body.token).toBeString();
    const view = await t.request("GET", `/api/v1/users/${user.id}`, { token: org.adminToken });
    expect(view.body.mfa_enabled).toBe(false);
    expect(await auditActions(t, org.adminToken, "mfa.reset")).toHaveLength(1);

    const theirs = await t.createOrganization();
    const foreign = await t.request("DELETE", `/api/v1/users/${user.id}/mfa`, { token: theirs.adminToken });
    expect(foreign.status).toBe(404);
    expect(foreign.body.reason).toBe("user_not_found");
    const foreignLockout = await t.request("DELETE", `/api/v1/users/${user.id}/lockout`, {
      token: theirs.adminToken,
    });
    expect(foreignLockout.status).toBe(404);
  });
});

describe("require_mfa", () => {
  test("an administrator without a factor cannot require one of everyone (409), not with an API key either", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const key = await t.createApiKey(org.adminToken, ["admin"]);
    for (const token of [org.adminToken, key]) {
      const response = await t.request("PATCH", "/api/v1/organizations/current", {
        token,
        body: { require_mfa: true },
      });
      expect(response.status).toBe(409);
      expect(response.body.reason).toBe("mfa_not_enabled");
    }
  });

  test("a user without MFA gets a session only for setting it up; a confirmed factor opens the rest", async () => {
    const t = await newApp();
    const org = await adminWithTotp(t);
    const user = await t.createUser(org.adminToken, "operator");
    const turnedOn = await t.request("PATCH", "/api/v1/organizations/current", {
      token: org.adminToken,
      body: { require_mfa: true },
    });
    expect(turnedOn.status).toBe(200);
    expect(turnedOn.body.require_mfa).toBe(true);

    // The session the operator already had is held to setup too, not only new ones.
    const session = (await login(t, user.email)).body;
    expect(session.mfa_setup_required).toBe(true);
    for (const token of [user.token, session.token]) {
      const devices = await t.request("GET", "/api/v1/devices", { token });
      expect(devices.status).toBe(403);
      expect(devices.body.reason).toBe("mfa_setup_required");
      expect(devices.body.details).toBe("multi-factor authentication must be set up first");
      expect((await t.request("GET", "/api/v1/users/me", { token })).status).toBe(200);
      expect((await t.request("GET", MFA, { token })).status).toBe(200);
    }

    const { secret } = await enableTotp(t, session.token);
    expect((await t.request("GET", "/api/v1/devices", { token: session.token })).status).toBe(200);
    const next = await login(t, user.email);
    expect(next.body.mfa_required).toBe(true);
    expect((await verify(t, next.body.mfa_token, "totp", unusedCode(t, secret))).status).toBe(200);
  });
});
