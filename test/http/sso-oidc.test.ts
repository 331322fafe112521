/**
 * OpenID Connect single sign-on through Bulwark's HTTP API against a real OpenID Provider (panva's
 * certified oidc-provider, on loopback): its login and consent forms are filled in as a person would, and
 * everything Bulwark checks is checked on what that provider really sends.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import type { TCPSocketListener } from "bun";
import { organizations } from "../../src/db/tables";
import { JOBS } from "../../src/jobs/jobs";
import { documentedLocationParameters } from "../helpers/documented-redirects";
import { enableTotp } from "../helpers/mfa";
import {
  authorizeOidc,
  OIDC_CALLBACK,
  organizationWithOidc as organizationWithOidcAt,
  startOidcProvider,
  type TestOidcProvider,
  throughOidcProvider,
} from "../helpers/oidc-provider";
import { selfSignedCertificate } from "../helpers/pki";
import { expectServerErrors } from "../helpers/server-errors";
import {
  freshTestApps,
  inProcessTest,
  requestLogEntry,
  TEST_PASSWORD,
  type TestApp,
  type TestResponse,
} from "../helpers/test-app";

const CALLBACK = OIDC_CALLBACK;
const CALLBACK_API = "/api/v1/auth/sso/oidc/callback";

let op: TestOidcProvider;
beforeAll(async () => {
  op = await startOidcProvider({ redirectUris: [CALLBACK] });
});
afterAll(() => op.close());

const newApp = freshTestApps({
  // The test provider runs on plain http on loopback.
  auth: { oidc_allow_insecure_issuers: true, oidc_allow_private_issuers: true },
  rate_limit: { unauthenticated_per_minute: 10_000 },
});

const organizationWithOidc = (t: TestApp, oidc: Record<string, unknown> = {}) =>
  organizationWithOidcAt(t, op, oidc);

function randomState() {
  return crypto.randomUUID().replaceAll("-", "");
}

const authorize = authorizeOidc;

const throughProvider = (t: TestApp, login: string, alter?: (url: URL) => void) =>
  throughOidcProvider(t, op, login, alter);

function callback(t: TestApp, body: Record<string, unknown>) {
  return t.request("POST", CALLBACK_API, { body });
}

describe("connection settings", () => {
  test("are checked on save: discovery must answer, redirect URIs must be absolute; the secret is never returned", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const patch = (oidc: Record<string, unknown>) =>
      t.request("PATCH", "/api/v1/organizations/current", { token: org.adminToken, body: { sso: { oidc } } });
    const base = { enabled: true, issuer: op.issuer, client_id: op.client_id, redirect_uris: [CALLBACK] };

    const nowhere = await patch({ ...base, issuer: "http://127.0.0.1:9/nothing-listens" });
    expect(nowhere.status).toBe(400);
    expect(nowhere.body.reason).toBe("sso_discovery_failed");
    expect(nowhere.body.details).toStartWith("sso.oidc.issuer: discovery failed");

    const relative = await patch({ ...base, redirect_uris: ["/sso/callback", "https://x.test/cb#frag"] });
    expect(relative.status).toBe(400);
    expect(relative.body.errors.map((error: { field: string }) => error.field)).toEqual([
      "sso.oidc.redirect_uris.0",
      "sso.oidc.redirect_uris.1",
    ]);

    const saved = await patch({ ...base, client_secret: op.client_secret, allowed_domains: ["@Corp.Test"] });
    expect(saved.status).toBe(200);
    expect(saved.body.sso.oidc).toEqual({
      enabled: true,
      issuer: op.issuer,
      client_id: op.client_id,
      has_client_secret: true,
      redirect_uris: [CALLBACK],
      allowed_domains: ["corp.test"],
      default_role: "member",
      auto_provision: true,
    });
    expect(JSON.stringify(saved.body)).not.toContain(op.client_secret);
    // A change that leaves the secret out keeps it.
    const renamed = await patch({ default_role: "auditor" });
    expect(renamed.body.sso.oidc.has_client_secret).toBe(true);
    expect(renamed.body.sso.oidc.default_role).toBe("auditor");
    const read = await t.request("GET", "/api/v1/organizations/current", { token: org.adminToken });
    expect(JSON.stringify(read.body)).not.toContain(op.client_secret);
    const audit = await t.request("GET", "/api/v1/audit-logs?action=organization.update", {
      token: org.adminToken,
    });
    expect(audit.body.data[0].details.sso_fields).toContain("sso.oidc.default_role");
    expect(JSON.stringify(audit.body)).not.toContain(op.client_secret);
  });

  test("a plain-http issuer is refused unless auth.oidc_allow_insecure_issuers", async () => {
    const t = await newApp({ auth: { oidc_allow_insecure_issuers: false } });
    const org = await t.createOrganization();
    const response = await t.request("PATCH", "/api/v1/organizations/current", {
      token: org.adminToken,
      body: {
        sso: {
          oidc: { enabled: true, issuer: op.issuer, client_id: op.client_id, redirect_uris: [CALLBACK] },
        },
      },
    });
    expect(response.status).toBe(400);
    expect(response.body.details).toContain("oidc_allow_insecure_issuers");
  });

  inProcessTest("the client secret is stored encrypted, not in the database's plain text", async () => {
    const t = await newApp();
    await organizationWithOidc(t);
    const stored = await t.deps.db.select({ settings: organizations.ssoSettings }).from(organizations);
    expect(JSON.stringify(stored)).toContain(op.client_id);
    expect(JSON.stringify(stored)).not.toContain(op.client_secret);
  });
});

describe("the issuer's address", () => {
  // Things an issuer could point at, none of them an OpenID provider. Each counts the connections it gets.
  const connections = { banner: 0, web: 0, redirectTarget: 0 };
  /** A TCP listener on loopback that greets each connection with `greeting`, or hangs up. */
  const tcpListener = (counter: keyof typeof connections, greeting: string | null) =>
    Bun.listen({
      hostname: "127.0.0.1",
      port: 0,
      socket: {
        open(socket) {
          connections[counter]++;
          if (greeting === null) socket.end();
          else socket.write(greeting);
        },
        data() {},
      },
    });
  let closedPort: number;
  let banner: TCPSocketListener;
  let redirectTarget: TCPSocketListener;
  let web: ReturnType<typeof Bun.serve>;
  let tls: ReturnType<typeof Bun.serve>;
  beforeAll(() => {
    const closed = tcpListener("redirectTarget", null);
    closedPort = closed.port;
    closed.stop(true);
    // A service that is neither TLS nor HTTP: it greets every connection with an SSH banner.
    banner = tcpListener("banner", "SSH-2.0-OpenSSH_9.6\r\n");
    redirectTarget = tcpListener("redirectTarget", null);
    // An ordinary web server: a page, broken JSON, a redirect, a document that names another issuer.
    web = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      fetch(request) {
        connections.web++;
        const path = new URL(request.url).pathname;
        if (path.startsWith("/broken-json/"))
          return new Response('{"issuer": "http', { headers: { "content-type": "application/json" } });
        if (path.startsWith("/redirect/"))
          return Response.redirect(`http://127.0.0.1:${redirectTarget.port}${path}`, 302);
        if (path.startsWith("/elsewhere/"))
          return Response.json({
            issuer: "https://idp.example.com",
            authorization_endpoint: "https://idp.example.com/auth",
            token_endpoint: "https://idp.example.com/token",
            jwks_uri: "https://idp.example.com/jwks",
          });
        return new Response("<html><body>It works!</body></html>", {
          headers: { "content-type": "text/html" },
        });
      },
    });
    // A TLS web server whose certificate (openssl's) nobody trusts.
    const { certificate, key } = selfSignedCertificate("/CN=intranet", "IP:127.0.0.1");
    tls = Bun.serve({
      hostname: "127.0.0.1",
      port: 0,
      tls: { cert: certificate, key },
      fetch() {
        return new Response("<html><body>Intranet</body></html>", {
          headers: { "content-type": "text/html" },
        });
      },
    });
  });
  afterAll(() => {
    banner.stop(true);
    redirectTarget.stop(true);
    web.stop(true);
    tls.stop(true);
  });

  /**
   * Saves an enabled connection to an issuer (`fields` added to it), in one new organization of `t`:
   * a refused save changes nothing, so the next one starts from the same settings.
   */
  const issuerSaver = async (t: TestApp) => {
    const org = await t.createOrganization();
    return (issuer: string, fields: Record<string, unknown> = {}) =>
      t.request("PATCH", "/api/v1/organizations/current", {
        token: org.adminToken,
        body: {
          sso: {
            oidc: { enabled: true, issuer, client_id: op.client_id, redirect_uris: [CALLBACK], ...fields },
          },
        },
      });
  };
  /** What a client learns from a refused save: everything but the request id and the issuer it sent. */
  const seen = (response: TestResponse) => {
    const { request_id, errors, ...rest } = response.body;
    expect(request_id).toBeString();
    return {
      status: response.status,
      ...rest,
      errors: errors.map(({ received, ...error }: { received: string }) => error),
    };
  };
  /** The budget of a test that starts two servers (two executables against dist/bulwark), not 5 s. */
  const TWO_SERVERS_MS = 20_000;
  /** Saves each issuer and expects exactly the answer a closed port gets. */
  const expectAnsweredAsClosedPort = async (
    save: Awaited<ReturnType<typeof issuerSaver>>,
    issuers: string[],
  ) => {
    const closed = seen(await save(`http://127.0.0.1:${closedPort}`));
    expect(closed).toMatchObject({ status: 400, reason: "sso_discovery_failed" });
    expect(closed.details).toStartWith("sso.oidc.issuer: discovery failed");
    for (const issuer of issuers)
      expect({ issuer, ...seen(await save(issuer)) }).toEqual({ issuer, ...closed });
  };

  test("a closed port, a service that is not TLS or HTTP, and web servers that are not providers all get the same answer", async () => {
    await expectAnsweredAsClosedPort(await issuerSaver(await newApp()), [
      `https://127.0.0.1:${closedPort}`,
      `http://127.0.0.1:${banner.port}`,
      `https://127.0.0.1:${banner.port}`,
      `https://127.0.0.1:${tls.port}`,
      `http://127.0.0.1:${web.port}/html`,
      `http://127.0.0.1:${web.port}/broken-json`,
      `http://127.0.0.1:${web.port}/redirect`,
      `http://127.0.0.1:${web.port}/elsewhere`,
    ]);
    // Each of them was reached, so the answers are alike for what answered; a redirect is not followed.
    expect(connections.banner).toBeGreaterThanOrEqual(2);
    expect(connections.web).toBeGreaterThanOrEqual(4);
    expect(connections.redirectTarget).toBe(0);
  });

  test("the server log keeps what answered, for the operator, and no secret", async () => {
    const t = await newApp();
    const save = await issuerSaver(t);
    const secret = `secret-${crypto.randomUUID()}`;
    const refused = await save(`http://127.0.0.1:${banner.port}`, { client_secret: secret });
    expect(refused.status).toBe(400);
    const entry = await requestLogEntry(t, refused.body.request_id, "request refused");
    expect(entry).toMatchObject({ level: "warn", reason: "sso_discovery_failed" });
    expect(entry.detail).toContain(`discovery of http://127.0.0.1:${banner.port} failed`);
    expect(entry.detail).toMatch(/parse error/i);
    expect(t.logLines.join("\n")).not.toContain(secret);
  });

  test("cloud metadata on link-local is refused even with auth.oidc_allow_private_issuers, like a closed port", async () => {
    await expectAnsweredAsClosedPort(await issuerSaver(await newApp()), [
      "http://169.254.169.254",
      "http://169.254.169.254/latest/meta-data",
      "http://[::ffff:169.254.169.254]",
      "http://[fe80::a9fe:a9fe]",
      "http://[fd00:ec2::254]",
      "http://100.100.100.200",
    ]);
  });

  test(
    "loopback is refused without auth.oidc_allow_private_issuers, like a closed port and before any connection; accepted with it",
    async () => {
      const t = await newApp({ auth: { oidc_allow_private_issuers: false } });
      const save = await issuerSaver(t);
      const before = connections.banner;
      await expectAnsweredAsClosedPort(save, [
        op.issuer,
        `http://127.0.0.1:${banner.port}`,
        `http://[::ffff:127.0.0.1]:${banner.port}`,
      ]);
      expect(connections.banner).toBe(before);
      const refused = await save(op.issuer);
      const entry = await requestLogEntry(t, refused.body.request_id, "request refused");
      expect(entry.detail).toContain(
        "127.0.0.1 is loopback, reached only with auth.oidc_allow_private_issuers",
      );

      const permissive = await issuerSaver(await newApp({ auth: { oidc_allow_private_issuers: true } }));
      expect((await permissive(op.issuer)).status).toBe(200);
    },
    TWO_SERVERS_MS,
  );

  test(
    "a host name is judged by the addresses it resolves to: localhost is refused without auth.oidc_allow_private_issuers, reached with it",
    async () => {
      const named = await startOidcProvider({ redirectUris: [CALLBACK], host: "localhost" });
      try {
        const strict = await newApp({ auth: { oidc_allow_private_issuers: false } });
        const before = connections.banner;
        await expectAnsweredAsClosedPort(await issuerSaver(strict), [
          named.issuer,
          `http://localhost:${banner.port}`,
        ]);
        expect(connections.banner).toBe(before);

        const permissive = await issuerSaver(await newApp({ auth: { oidc_allow_private_issuers: true } }));
        expect((await permissive(named.issuer, { client_id: named.client_id })).status).toBe(200);
      } finally {
        await named.close();
      }
    },
    TWO_SERVERS_MS,
  );
});

describe("sign-in", () => {
  test("creates the user of an allowed domain and answers exactly like a login; the next sign-in finds them by subject", async () => {
    const t = await newApp();
    const org = await organizationWithOidc(t);
    const login = `carol-${randomState().slice(0, 6)}`;
    op.setAccount(login, { email: "Carol@corp.test", email_verified: true, name: "Carol Example" });
    const flow = await throughProvider(t, login);
    expect(flow.iss).toBe(op.issuer);
    const response = await callback(t, flow);
    expect(response.status).toBe(200);
    expect(Object.keys(response.body).sort()).toEqual([
      "expires_in",
      "refresh_token",
      "token",
      "token_type",
      "user",
    ]);
    expect(response.body.user).toMatchObject({
      email: "carol@corp.test",
      name: "Carol Example",
      role: "member",
      organization_id: org.organizationId,
    });
    const me = await t.request("GET", "/api/v1/users/me", { token: response.body.token });
    expect(me.status).toBe(200);
    expect(me.body.email).toBe("carol@corp.test");

    // The provider's email changes; the account is the same person's, found by (provider, subject).
    op.setAccount(login, { email: "carol.example@corp.test", email_verified: true, name: "Carol Example" });
    const again = await callback(t, await throughProvider(t, login));
    expect(again.status).toBe(200);
    expect(again.body.user.id).toBe(response.body.user.id);

    const audit = await t.request("GET", "/api/v1/audit-logs?action=auth.login&page_size=100", {
      token: org.adminToken,
    });
    const ssoLogins = audit.body.data.filter(
      (entry: { details: { method?: string } }) => entry.details.method === "sso",
    );
    expect(ssoLogins).toHaveLength(2);
    expect(ssoLogins[0].details).toMatchObject({ provider: "oidc", subject: login });
  });

  test("a first sign-in in two tabs at once creates one account and signs both in", async () => {
    const t = await newApp();
    const org = await organizationWithOidc(t);
    const login = `twice-${randomState().slice(0, 6)}`;
    op.setAccount(login, { email: "twice@corp.test", email_verified: true, name: "Two Tabs" });
    const flows = [await throughProvider(t, login), await throughProvider(t, login)];
    const answers = await Promise.all(flows.map((flow) => callback(t, flow)));
    expect(answers.map((answer) => answer.status)).toEqual([200, 200]);
    expect(answers[0]?.body.user.id).toBe(answers[1]?.body.user.id);
    const created = await t.request("GET", "/api/v1/audit-logs?action=user.create&page_size=100", {
      token: org.adminToken,
    });
    expect(
      created.body.data.filter(
        (entry: { details: { email?: string } }) => entry.details.email === "twice@corp.test",
      ),
    ).toHaveLength(1);
  });

  test("links an existing user by verified email, and a user with MFA is not challenged again", async () => {
    const t = await newApp();
    const org = await organizationWithOidc(t);
    const user = await t.createUser(org.adminToken, "operator");
    await enableTotp(t, user.token);
    const login = `linked-${randomState().slice(0, 6)}`;
    op.setAccount(login, { email: user.email, email_verified: true });
    const response = await callback(t, await throughProvider(t, login));
    expect(response.status).toBe(200);
    expect(response.body.mfa_required).toBeUndefined();
    expect(response.body.user).toMatchObject({ id: user.id, role: "operator" });
    // The password still works, and still asks for the second factor.
    const password = await t.request("POST", "/api/v1/auth/login", {
      body: { email: user.email, password: TEST_PASSWORD },
    });
    expect(password.body.mfa_required).toBe(true);
  });

  test("a replayed state is refused", async () => {
    const t = await newApp();
    await organizationWithOidc(t);
    op.setAccount("replay", { email: "replay@corp.test", email_verified: true });
    const flow = await throughProvider(t, "replay");
    expect((await callback(t, flow)).status).toBe(200);
    const replayed = await callback(t, flow);
    expect(replayed.status).toBe(401);
    expect(replayed.body.reason).toBe("sso_state_invalid");
    expect(replayed.body.details).toStartWith("state: already used");
    const unknown = await callback(t, { ...flow, state: randomState() });
    expect(unknown.status).toBe(401);
    expect(unknown.body.details).toStartWith("state: no sign-in was started");
  });

  test("a tampered code is refused by the provider, and the 401 says so", async () => {
    const t = await newApp();
    await organizationWithOidc(t);
    op.setAccount("tamper", { email: "tamper@corp.test", email_verified: true });
    const flow = await throughProvider(t, "tamper");
    const response = await callback(t, { ...flow, code: `${flow.code.slice(0, -2)}xx` });
    expect(response.status).toBe(401);
    expect(response.body.reason).toBe("sso_code_rejected");
    expect(response.body.details).toStartWith(
      "code: the identity provider refused the authorization code (invalid_grant",
    );
  });

  test("an ID token carrying another nonce than the sign-in's is refused", async () => {
    const t = await newApp();
    await organizationWithOidc(t);
    op.setAccount("nonce", { email: "nonce@corp.test", email_verified: true });
    const flow = await throughProvider(t, "nonce", (url) =>
      url.searchParams.set("nonce", "not-the-nonce-bulwark-chose"),
    );
    const response = await callback(t, flow);
    expect(response.status).toBe(401);
    expect(response.body.reason).toBe("sso_id_token_invalid");
    expect(response.body.details).toStartWith("nonce:");
  });

  test("an ID token whose signature the provider's published keys do not verify is refused", async () => {
    // A provider of its own: its keys are fetched (and cached) with the connection's first sign-in.
    const forged = await startOidcProvider({ redirectUris: [OIDC_CALLBACK] });
    try {
      const t = await newApp();
      const org = await organizationWithOidcAt(t, forged);
      await forged.publishForeignKeys();
      forged.setAccount("forged", { email: "forged@corp.test", email_verified: true });
      const flow = await throughOidcProvider(t, forged, "forged");
      const response = await callback(t, flow);
      expect(response.status).toBe(401);
      expect(response.body.reason).toBe("sso_id_token_invalid");
      // Nobody was created from the unverified token.
      const users = await t.request("GET", "/api/v1/users", { token: org.adminToken });
      expect(users.body.data.map((user: { email: string }) => user.email)).not.toContain("forged@corp.test");
    } finally {
      await forged.close();
    }
  });

  test("an iss parameter naming another issuer is refused (RFC 9207)", async () => {
    const t = await newApp();
    await organizationWithOidc(t);
    op.setAccount("mixup", { email: "mixup@corp.test", email_verified: true });
    const flow = await throughProvider(t, "mixup");
    const response = await callback(t, { ...flow, iss: "https://attacker.example" });
    expect(response.status).toBe(401);
    expect(response.body.details).toStartWith("iss:");
  });

  test("an unverified email neither links nor creates an account", async () => {
    const t = await newApp();
    const org = await organizationWithOidc(t);
    const existing = await t.createUser(org.adminToken, "admin");
    op.setAccount("unverified", { email: existing.email, email_verified: false });
    const response = await callback(t, await throughProvider(t, "unverified"));
    expect(response.status).toBe(401);
    expect(response.body.reason).toBe("sso_email_not_verified");
    expect(response.body.details).toStartWith("email_verified:");
  });

  test("an email outside allowed_domains creates nobody", async () => {
    const t = await newApp();
    const org = await organizationWithOidc(t);
    op.setAccount("outsider", { email: "mallory@elsewhere.test", email_verified: true });
    const response = await callback(t, await throughProvider(t, "outsider"));
    expect(response.status).toBe(401);
    expect(response.body.reason).toBe("sso_domain_not_allowed");
    expect(response.body.details).toContain("elsewhere.test is not in this connection's allowed_domains");
    const users = await t.request("GET", "/api/v1/users?page_size=100", { token: org.adminToken });
    expect(users.body.data.map((user: { email: string }) => user.email)).not.toContain(
      "mallory@elsewhere.test",
    );
    const failures = await t.request("GET", "/api/v1/audit-logs?action=auth.sso_login", {
      token: org.adminToken,
    });
    expect(failures.body.data[0]).toMatchObject({
      outcome: "failure",
      details: { provider: "oidc", reason: "sso_domain_not_allowed" },
    });
  });

  test("a disabled user is refused", async () => {
    const t = await newApp();
    const org = await organizationWithOidc(t);
    op.setAccount("disabled", { email: "disabled@corp.test", email_verified: true });
    const first = await callback(t, await throughProvider(t, "disabled"));
    expect(first.status).toBe(200);
    const disabled = await t.request("PATCH", `/api/v1/users/${first.body.user.id}`, {
      token: org.adminToken,
      body: { disabled: true },
    });
    expect(disabled.status).toBe(200);
    const response = await callback(t, await throughProvider(t, "disabled"));
    expect(response.status).toBe(401);
    expect(response.body.reason).toBe("account_disabled");
  });

  inProcessTest("a state older than 10 minutes is refused", async () => {
    const t = await newApp();
    await organizationWithOidc(t);
    op.setAccount("slow", { email: "slow@corp.test", email_verified: true });
    const flow = await throughProvider(t, "slow");
    t.clock.advanceSeconds(601);
    const response = await callback(t, flow);
    expect(response.status).toBe(401);
    expect(response.body.details).toStartWith("state: expired");
  });
});

describe("the provider changes", () => {
  test("a subject linked at one provider means nobody at another: pointing the connection elsewhere signs no one in by it", async () => {
    const t = await newApp();
    const org = await organizationWithOidc(t);
    op.setAccount("shared-sub", { email: "shared@corp.test", email_verified: true });
    expect((await callback(t, await throughProvider(t, "shared-sub"))).status).toBe(200);
    // Another provider whose account of the same sub says nothing of its email.
    const other = await startOidcProvider({ redirectUris: [CALLBACK] });
    try {
      other.setAccount("shared-sub", {});
      const moved = await t.request("PATCH", "/api/v1/organizations/current", {
        token: org.adminToken,
        body: {
          sso: {
            oidc: { issuer: other.issuer, client_id: other.client_id, client_secret: other.client_secret },
          },
        },
      });
      expect(moved.status).toBe(200);
      const state = randomState();
      const started = await authorize(t, { client_id: other.client_id, redirect_uri: CALLBACK, state });
      const back = await other.signIn(started.location ?? "", "shared-sub");
      const response = await callback(t, {
        code: back.searchParams.get("code"),
        state,
        iss: back.searchParams.get("iss"),
      });
      expect(response.status).toBe(401);
      expect(response.body.reason).toBe("sso_email_not_verified");
    } finally {
      await other.close();
    }
  });

  test("a client secret the provider refuses is a 503 naming the setup, not the user's code", async () => {
    const t = await newApp();
    await organizationWithOidc(t, { client_secret: "not-the-secret-the-provider-knows" });
    op.setAccount("wrong-secret", { email: "wrong-secret@corp.test", email_verified: true });
    expectServerErrors(503);
    const response = await callback(t, await throughProvider(t, "wrong-secret"));
    expect(response.status).toBe(503);
    expect(response.body.reason).toBe("sso_provider_unavailable");
    expect(response.body.details).toStartWith("invalid_client: check sso.oidc.client_id and client_secret");
  });

  test("an API key cannot change the SSO settings, even an admin's", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const key = await t.createApiKey(org.adminToken, ["admin"]);
    const response = await t.request("PATCH", "/api/v1/organizations/current", {
      token: key,
      body: { sso: { oidc: { enabled: false, allowed_domains: ["corp.test"] } } },
    });
    expect(response.status).toBe(403);
    expect(response.body.reason).toBe("api_key_not_allowed");
  });
});

describe("authorize", () => {
  test("refuses an unknown client_id and a redirect_uri the connection does not list, without redirecting", async () => {
    const t = await newApp();
    await organizationWithOidc(t);
    const unknown = await authorize(t, { client_id: "nobody", redirect_uri: CALLBACK, state: randomState() });
    expect(unknown.status).toBe(400);
    expect(JSON.parse(unknown.text).reason).toBe("sso_connection_unknown");
    const elsewhere = await authorize(t, {
      client_id: op.client_id,
      redirect_uri: "https://attacker.example/steal",
      state: randomState(),
    });
    expect(elsewhere.status).toBe(400);
    expect(elsewhere.location).toBeNull();
    expect(JSON.parse(elsewhere.text).reason).toBe("sso_redirect_uri_not_allowed");
    const short = await authorize(t, { client_id: op.client_id, redirect_uri: CALLBACK, state: "short" });
    expect(short.status).toBe(400);
  });

  test("sends PKCE S256, a nonce and the client's state to the provider; a state in use is a 409", async () => {
    const t = await newApp();
    await organizationWithOidc(t);
    const state = randomState();
    const started = await authorize(t, { client_id: op.client_id, redirect_uri: CALLBACK, state });
    const url = new URL(started.location ?? "");
    expect(`${url.origin}${url.pathname}`).toBe(`${op.issuer}/auth`);
    expect(url.searchParams.get("code_challenge_method")).toBe("S256");
    expect(url.searchParams.get("code_challenge")).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(url.searchParams.get("nonce")?.length).toBeGreaterThanOrEqual(32);
    expect(url.searchParams.get("state")).toBe(state);
    expect(url.searchParams.get("scope")).toBe("openid profile email");
    // The OpenAPI document names exactly the parameters the redirect carries.
    const document = (await t.request("GET", "/api/v1/openapi.json")).body;
    expect([...url.searchParams.keys()].sort()).toEqual(
      documentedLocationParameters(document, "get", "/api/v1/auth/sso/oidc/authorize", 302).sort(),
    );
    const again = await authorize(t, { client_id: op.client_id, redirect_uri: CALLBACK, state });
    expect(again.status).toBe(409);
    expect(JSON.parse(again.text).reason).toBe("sso_state_taken");
  });

  test("a provider that stopped answering is a 503 naming it, not a 500", async () => {
    const t = await newApp();
    const other = await startOidcProvider({ redirectUris: [CALLBACK] });
    const org = await t.createOrganization();
    const saved = await t.request("PATCH", "/api/v1/organizations/current", {
      token: org.adminToken,
      body: {
        sso: {
          oidc: {
            enabled: true,
            issuer: other.issuer,
            client_id: other.client_id,
            redirect_uris: [CALLBACK],
          },
        },
      },
    });
    expect(saved.status).toBe(200);
    await other.close();
    expectServerErrors(503);
    // The discovery of the save is cached: a later start reaches the provider for its keys only at the
    // callback, so the cache is what answers here; a fresh server would rediscover. Either way no 500.
    const started = await authorize(t, {
      client_id: other.client_id,
      redirect_uri: CALLBACK,
      state: randomState(),
    });
    expect([302, 503]).toContain(started.status);
  });
});

describe("housekeeping", () => {
  inProcessTest("the purge job forgets states past their 10 minutes", async () => {
    const t = await newApp();
    await organizationWithOidc(t);
    op.setAccount("purged", { email: "purged@corp.test", email_verified: true });
    const flow = await throughProvider(t, "purged");
    t.clock.advanceSeconds(601);
    const purge = JOBS.find((job) => job.id === "purge-expired-sso-state");
    expect(await purge?.run(t.deps)).toMatchObject({ requests: 1 });
    const response = await callback(t, flow);
    expect(response.status).toBe(401);
    expect(response.body.details).toStartWith("state: no sign-in was started");
  });
});
