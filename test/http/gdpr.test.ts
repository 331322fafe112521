/**
 * Data-protection requests through the HTTP API: export, erasure, restriction, objection and their
 * record. Secrets are searched for by value in what the API returns, not by field name.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { checkIn, createEnrollmentToken, enrollBody, HEALTHY_FACTS } from "../helpers/devices";
import { enableTotp } from "../helpers/mfa";
import {
  OIDC_CALLBACK,
  organizationWithOidc,
  startOidcProvider,
  type TestOidcProvider,
  throughOidcProvider,
} from "../helpers/oidc-provider";
import { freshTestApps, TEST_PASSWORD, type TestApp } from "../helpers/test-app";
import { deliverWebhooks, startWebhookReceiver, verifyBothSignatures } from "../helpers/webhook-receiver";

const EXPORT = "/api/v1/gdpr/export";
const ERASE = "/api/v1/gdpr/delete";
const RESTRICT = "/api/v1/gdpr/restrict";
const OBJECT = "/api/v1/gdpr/object";
const REQUESTS = "/api/v1/gdpr/requests";

let op: TestOidcProvider;
beforeAll(async () => {
  op = await startOidcProvider({ redirectUris: [OIDC_CALLBACK] });
});
afterAll(() => op.close());

const newApp = freshTestApps({
  // The test provider runs on plain http on loopback.
  auth: { oidc_allow_insecure_issuers: true, oidc_allow_private_issuers: true },
  webhooks: { allow_private_targets: true },
  rate_limit: { unauthenticated_per_minute: 100_000, authenticated_per_minute: 100_000 },
});

async function expectStatus(t: TestApp, status: number, ...request: Parameters<TestApp["request"]>) {
  const response = await t.request(...request);
  if (response.status !== status)
    throw new Error(
      `${request[0]} ${request[1]}: expected ${status}, got ${response.status}: ${JSON.stringify(response.body)}`,
    );
  return response;
}

/** Enrolls a device for `userId` with a token the admin creates, and checks it in once with facts. */
async function enrollFor(t: TestApp, adminToken: string, userId: string, name: string) {
  const token = await createEnrollmentToken(t, adminToken, { user_id: userId });
  const enrolled = await expectStatus(t, 201, "POST", "/api/v1/devices/enroll", {
    body: enrollBody(token.token, { device_name: name }),
  });
  const device = enrolled.body as { id: string; device_token: string };
  const checked = await checkIn(t, device.device_token, { facts: HEALTHY_FACTS, agent_version: "1.5.0" });
  expect(checked.status).toBe(200);
  return { ...device, enrollmentToken: token.token, enrollmentTokenId: token.id };
}

/** An operator of a new organization with a password session, TOTP, an API key, a device and an enrollment token. */
async function personWithEverything(t: TestApp) {
  const org = await t.createOrganization();
  const person = await t.createUser(org.adminToken, "operator");
  const totp = await enableTotp(t, person.token);
  const apiKey = await expectStatus(t, 201, "POST", "/api/v1/auth/api-keys", {
    token: person.token,
    body: { name: "inventory sync", scopes: ["devices:read"] },
  });
  const ownToken = await createEnrollmentToken(t, person.token, { max_uses: 3 });
  const device = await enrollFor(t, org.adminToken, person.id, "Grace's laptop");
  return { org, person, totp, apiKey: apiKey.body as { id: string; key: string }, ownToken, device };
}

describe("GET /gdpr/export", () => {
  test("holds each kind of data about the caller and none of their secrets; a browser saves it", async () => {
    const t = await newApp();
    const { org, person, totp, apiKey, ownToken, device } = await personWithEverything(t);

    const response = await expectStatus(t, 200, "GET", EXPORT, { token: person.token });

    expect(response.headers.get("content-type")).toStartWith("application/json");
    expect(response.headers.get("content-disposition")).toMatch(
      new RegExp(`^attachment; filename="bulwark-personal-data-${person.id}-\\d{4}-\\d{2}-\\d{2}\\.json"$`),
    );
    const document = response.body;
    expect(document.format).toBe("bulwark.personal-data.v1");
    expect(document.profile).toMatchObject({
      id: person.id,
      email: person.email,
      role: "operator",
      mfa_enabled: true,
    });
    expect(document.organization).toMatchObject({ id: org.organizationId, role: "operator" });
    expect(document.devices).toHaveLength(1);
    expect(document.devices[0]).toMatchObject({
      id: device.id,
      device_name: "Grace's laptop",
      facts: HEALTHY_FACTS,
    });
    const events = document.devices[0].logs.map((entry: { event: string }) => entry.event);
    expect(events).toContain("device.enrolled");
    expect(events).toContain("device.checkin");
    expect(document.api_keys).toEqual([expect.objectContaining({ id: apiKey.id, name: "inventory sync" })]);
    const tokenIds = document.enrollment_tokens.map((token: { id: string }) => token.id).sort();
    expect(tokenIds).toEqual([ownToken.id, device.enrollmentTokenId].sort());
    expect(document.mfa_methods).toEqual([expect.objectContaining({ id: totp.methodId, type: "totp" })]);
    expect(document.recovery_codes).toEqual({ total: 10, unused: 10 });
    expect(document.sessions.length).toBeGreaterThanOrEqual(1);
    expect(document.sessions[0].ip).toBeString();
    const actions = document.audit_entries.map((entry: { action: string }) => entry.action);
    for (const action of [
      "user.create",
      "auth.login",
      "mfa.totp_confirm",
      "api_key.create",
      "enrollment_token.create",
    ])
      expect(actions).toContain(action);
    expect(document.data_protection_requests).toEqual([
      expect.objectContaining({
        id: document.request_id,
        type: "export",
        status: "completed",
        user_id: person.id,
      }),
    ]);

    const text = JSON.stringify(document);
    const secrets = {
      password: TEST_PASSWORD,
      "access token": person.token,
      "refresh token": person.session.refresh_token,
      "API key": apiKey.key,
      "TOTP secret": totp.secret,
      "enrollment token": ownToken.token,
      "device's enrollment token": device.enrollmentToken,
      "device token": device.device_token,
      ...Object.fromEntries(totp.recoveryCodes.map((code, index) => [`recovery code ${index}`, code])),
    };
    for (const [name, secret] of Object.entries(secrets)) {
      if (text.includes(secret)) throw new Error(`the export contains the ${name}`);
    }
    expect(text).not.toMatch(/password_hash|key_hash|token_hash|"secret"/);
  });

  test("an admin exports a user of their organization; anyone else gets 403, another organization's admin 404", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const member = await t.createUser(org.adminToken, "member");
    const operator = await t.createUser(org.adminToken, "operator");
    const other = await t.createOrganization();

    const forMember = await expectStatus(t, 200, "GET", `${EXPORT}?user_id=${member.id}`, {
      token: org.adminToken,
    });
    expect(forMember.body.profile.email).toBe(member.email);
    expect(forMember.body.data_protection_requests[0].requested_by).toEqual({
      type: "user",
      id: org.adminId,
    });

    const notAdmin = await t.request("GET", `${EXPORT}?user_id=${member.id}`, { token: operator.token });
    expect(notAdmin.status).toBe(403);
    expect(notAdmin.body.reason).toBe("scope_missing");
    const elsewhere = await t.request("GET", `${EXPORT}?user_id=${member.id}`, { token: other.adminToken });
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.body.reason).toBe("user_not_found");
    expect(JSON.stringify(elsewhere.body)).not.toContain(member.email);
    for (const [method, path] of [
      ["DELETE", ERASE],
      ["POST", RESTRICT],
    ] as const) {
      const response = await t.request(method, `${path}?user_id=${member.id}`, { token: other.adminToken });
      expect(response.status).toBe(404);
    }
    const objection = await t.request("POST", `${OBJECT}?user_id=${member.id}`, {
      token: other.adminToken,
      body: { processing: "device_activity", reason: "mine" },
    });
    expect(objection.status).toBe(404);
    // The member was not touched by any of it.
    await t.signIn(member.email);
  });

  test("API keys make requests only with the admin scope", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const member = await t.createUser(org.adminToken, "member");
    const narrow = await t.createApiKey(org.adminToken, ["users:read"]);
    const admin = await t.createApiKey(org.adminToken, ["admin"]);

    const refused = await t.request("GET", EXPORT, { token: narrow });
    expect(refused.status).toBe(403);
    expect(refused.body.reason).toBe("api_key_not_allowed");
    const forMember = await t.request("GET", `${EXPORT}?user_id=${member.id}`, { token: admin });
    expect(forMember.status).toBe(200);
    expect(forMember.body.data_protection_requests[0].requested_by.type).toBe("api_key");

    // Changing an account, a key must name it: forgetting user_id must not erase the key's creator.
    for (const [method, path] of [
      ["DELETE", ERASE],
      ["POST", RESTRICT],
    ] as const) {
      const unnamed = await t.request(method, path, { token: admin });
      expect(unnamed.status).toBe(400);
      expect(unnamed.body.errors[0].field).toBe("user_id");
    }
    await expectStatus(t, 200, "GET", "/api/v1/users/me", { token: org.adminToken });
    const erased = await expectStatus(t, 200, "DELETE", `${ERASE}?user_id=${member.id}`, { token: admin });
    expect(erased.body.requested_by.type).toBe("api_key");
  });

  test("a mistyped or repeated user_id is refused, never read as the caller", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const second = await t.createUser(org.adminToken, "admin");
    const member = await t.createUser(org.adminToken, "member");

    for (const [method, query] of [
      ["DELETE", `${ERASE}?userid=${member.id}`],
      ["POST", `${RESTRICT}?user=${member.id}`],
      ["DELETE", `${ERASE}?user_id=${member.id}&user_id=${second.id}`],
      ["POST", `${RESTRICT}?user_id=${member.id}&user_id=${org.adminId}`],
      ["GET", `${EXPORT}?user_id=${member.id}&user_id=${second.id}`],
    ] as const) {
      const refused = await t.request(method, query, { token: org.adminToken });
      expect(refused.status).toBe(400);
      expect(refused.body.code).toBe(400);
    }
    for (const token of [org.adminToken, second.token, member.token])
      await expectStatus(t, 200, "GET", "/api/v1/users/me", { token });
    const requests = await expectStatus(t, 200, "GET", REQUESTS, { token: org.adminToken });
    expect(requests.body.total).toBe(0);
  });

  test("user_id in the body names the person as the query does; an unknown field, a non-id or two different ids is a 400 that touches nobody", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const second = await t.createUser(org.adminToken, "admin");
    const member = await t.createUser(org.adminToken, "member");
    const other = await t.createUser(org.adminToken, "member");

    // The request the issue found restricting the admin who sent it: it restricts the member it names.
    const restricted = await expectStatus(t, 200, "POST", RESTRICT, {
      token: org.adminToken,
      body: { user_id: member.id },
    });
    expect(restricted.body).toMatchObject({ type: "restriction", user_id: member.id });
    expect((await t.request("GET", "/api/v1/users/me", { token: member.token })).body.reason).toBe(
      "account_restricted",
    );
    await expectStatus(t, 200, "GET", "/api/v1/users/me", { token: org.adminToken });

    const objected = await expectStatus(t, 200, "POST", OBJECT, {
      token: org.adminToken,
      body: { user_id: other.id, processing: "device_activity", reason: "asked by email" },
    });
    expect(objected.body.user_id).toBe(other.id);
    // Query and body naming the same person is one person.
    const same = await expectStatus(t, 200, "POST", `${OBJECT}?user_id=${other.id}`, {
      token: org.adminToken,
      body: { user_id: other.id.toUpperCase(), processing: "marketing", reason: "asked again" },
    });
    expect(same.body.user_id).toBe(other.id);

    for (const [method, path, body, field] of [
      // JSON null is no body to an optional schema: it must not become "about the caller".
      ["POST", RESTRICT, null, "body"],
      ["DELETE", ERASE, null, "body"],
      ["POST", RESTRICT, [other.id], "body"],
      ["POST", RESTRICT, { user_id: 12 }, "user_id"],
      ["POST", RESTRICT, { user_id: "the member" }, "user_id"],
      ["POST", RESTRICT, { userid: other.id }, "userid"],
      ["POST", `${RESTRICT}?user_id=${other.id}`, { user_id: second.id }, "user_id"],
      ["DELETE", ERASE, { user: other.id }, "user"],
      ["DELETE", `${ERASE}?user_id=${second.id}`, { user_id: other.id }, "user_id"],
      ["POST", OBJECT, { user_id: "x", processing: "device_activity", reason: "r" }, "user_id"],
      // A route that takes no body refuses one with fields rather than ignoring them.
      ["DELETE", `/api/v1/users/${other.id}/mfa`, { user_id: other.id }, "user_id"],
    ] as const) {
      const refused = await t.request(method, path, { token: org.adminToken, body });
      expect({ path, status: refused.status, field: refused.body.errors?.[0]?.field }).toEqual({
        path,
        status: 400,
        field,
      });
    }
    // Nobody was restricted, erased or signed out by the refusals.
    for (const token of [org.adminToken, second.token, other.token])
      await expectStatus(t, 200, "GET", "/api/v1/users/me", { token });
  });
});

describe("DELETE /gdpr/delete", () => {
  test("revokes every token and key at once, unassigns devices and leaves no trace of the email", async () => {
    const t = await newApp();
    const { org, person, apiKey, device } = await personWithEverything(t);
    // The person leaves their email in a policy history and a wipe.
    const policy = await expectStatus(t, 201, "POST", "/api/v1/policies", {
      token: person.token,
      body: { name: "Kiosks" },
    });
    await expectStatus(t, 202, "POST", `/api/v1/devices/${device.id}/wipe`, {
      token: person.token,
      body: { reason: "left the company" },
    });

    // A mistyped password leaves an anonymous sign-in attempt naming the email.
    const mistyped = await t.request("POST", "/api/v1/auth/login", {
      body: { email: person.email, password: "not-the-password" },
    });
    expect(mistyped.status).toBe(401);

    const erased = await expectStatus(t, 200, "DELETE", ERASE, { token: person.token });

    expect(erased.body).toMatchObject({ type: "erasure", status: "completed", user_id: person.id });
    expect(erased.body.details).toMatchObject({
      api_keys_revoked: 1,
      devices_unassigned: 1,
      mfa_methods_deleted: 1,
    });
    expect(erased.body.details.sessions_revoked).toBeGreaterThanOrEqual(1);
    for (const token of [person.token, apiKey.key]) {
      const after = await t.request("GET", "/api/v1/users/me", { token });
      expect(after.status).toBe(401);
    }
    const refresh = await t.request("POST", "/api/v1/auth/refresh", {
      body: { refresh_token: person.session.refresh_token },
    });
    expect(refresh.status).toBe(401);
    const signIn = await t.request("POST", "/api/v1/auth/login", {
      body: { email: person.email, password: TEST_PASSWORD },
    });
    expect(signIn.status).toBe(401);

    const deviceView = await expectStatus(t, 200, "GET", `/api/v1/devices/${device.id}`, {
      token: org.adminToken,
    });
    expect(deviceView.body.user_id).toBeNull();
    expect((await t.request("GET", `/api/v1/users/${person.id}`, { token: org.adminToken })).status).toBe(
      404,
    );

    // Audit entries keep the person's id as actor and target, without their email, name or address.
    const audit = await expectStatus(t, 200, "GET", "/api/v1/audit-logs?page_size=100", {
      token: org.adminToken,
    });
    const theirs = audit.body.data.filter((entry: { actor: { id: string } }) => entry.actor.id === person.id);
    expect(theirs.length).toBeGreaterThan(3);
    for (const entry of theirs) {
      expect(entry.actor.label).toBeNull();
      expect(entry.ip).toBeNull();
    }
    expect(audit.body.data.some((entry: { target: { id: string } }) => entry.target.id === person.id)).toBe(
      true,
    );
    const attempts = audit.body.data.filter(
      (entry: { actor: { type: string }; target: { id: string } }) =>
        entry.actor.type === "anonymous" && entry.target.id === person.id,
    );
    expect(attempts.length).toBeGreaterThan(0);
    for (const entry of attempts) {
      expect(entry.ip).toBeNull();
      expect(entry.actor.label).toBe(`erased user ${person.id}`);
    }
    const everywhere = [
      audit.body,
      (await t.request("GET", `/api/v1/policies/${policy.body.id}/history`, { token: org.adminToken })).body,
      (await t.request("GET", `/api/v1/devices/${device.id}/logs?page_size=100`, { token: org.adminToken }))
        .body,
      (await t.request("GET", "/api/v1/enrollment-tokens?page_size=100", { token: org.adminToken })).body,
      (await t.request("GET", "/api/v1/users?page_size=100", { token: org.adminToken })).body,
      (await t.request("GET", REQUESTS, { token: org.adminToken })).body,
    ];
    for (const body of everywhere) {
      expect(JSON.stringify(body)).not.toContain(person.email);
      expect(JSON.stringify(body)).not.toContain("Test operator");
    }
    const history = everywhere[1] as { data: { changed_by: string }[] };
    expect(history.data[0]?.changed_by).toBe(`erased user ${person.id}`);

    // The email is free again, and the erased account cannot be erased twice.
    await expectStatus(t, 201, "POST", "/api/v1/users", {
      token: org.adminToken,
      body: { email: person.email, name: "Someone new", role: "member", password: TEST_PASSWORD },
    });
    const again = await t.request("DELETE", `${ERASE}?user_id=${person.id}`, { token: org.adminToken });
    expect(again.status).toBe(404);
  });

  test("someone whose email contains the erased one keeps theirs everywhere", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const tag = crypto.randomUUID().slice(0, 6);
    const create = async (email: string) => {
      const user = await expectStatus(t, 201, "POST", "/api/v1/users", {
        token: org.adminToken,
        body: { email, name: "Ann", role: "operator", password: TEST_PASSWORD },
      });
      const session = await t.signIn(email);
      const key = await t.createApiKey(session.token, ["policies:write"]);
      await expectStatus(t, 201, "POST", "/api/v1/policies", { token: key, body: { name: `By ${email}` } });
      return { id: user.body.id as string, token: session.token };
    };
    const ann = await create(`ann-${tag}@corp.test`);
    await create(`joann-${tag}@corp.test`);

    await expectStatus(t, 200, "DELETE", ERASE, { token: ann.token });

    const audit = await expectStatus(t, 200, "GET", "/api/v1/audit-logs?page_size=100", {
      token: org.adminToken,
    });
    const labels = audit.body.data.map((entry: { actor: { label: string | null } }) => entry.actor.label);
    expect(labels).toContain(`key policies:write (joann-${tag}@corp.test)`);
    expect(labels).not.toContain(`key policies:write (ann-${tag}@corp.test)`);
    const policies = await expectStatus(t, 200, "GET", "/api/v1/policies?page_size=100", {
      token: org.adminToken,
    });
    const changedBy: string[] = [];
    for (const policy of policies.body.data.filter((row: { name: string }) => row.name.startsWith("By "))) {
      const history = await t.request("GET", `/api/v1/policies/${policy.id}/history`, {
        token: org.adminToken,
      });
      changedBy.push(history.body.data[0].changed_by);
    }
    expect(changedBy.sort()).toEqual(
      [`key policies:write (erased user ${ann.id})`, `key policies:write (joann-${tag}@corp.test)`].sort(),
    );
  });

  test("the last admin cannot erase or restrict themselves (409), and the refusals are on record", async () => {
    const t = await newApp();
    const org = await t.createOrganization();

    const erase = await t.request("DELETE", ERASE, { token: org.adminToken });
    expect(erase.status).toBe(409);
    expect(erase.body.reason).toBe("last_admin");
    const restrict = await t.request("POST", RESTRICT, { token: org.adminToken });
    expect(restrict.status).toBe(409);
    expect(restrict.body.reason).toBe("last_admin");
    await expectStatus(t, 200, "GET", "/api/v1/users/me", { token: org.adminToken });
    const list = await expectStatus(t, 200, "GET", REQUESTS, { token: org.adminToken });
    expect(
      list.body.data.map((request: { type: string; status: string }) => [request.type, request.status]),
    ).toEqual([
      ["restriction", "rejected"],
      ["erasure", "rejected"],
    ]);
    const audit = await expectStatus(t, 200, "GET", "/api/v1/audit-logs?action=gdpr.erasure", {
      token: org.adminToken,
    });
    expect(audit.body.data[0].outcome).toBe("failure");

    // With a second admin, the first may go.
    const second = await t.createUser(org.adminToken, "admin");
    await expectStatus(t, 200, "DELETE", ERASE, { token: org.adminToken });
    await expectStatus(t, 200, "GET", "/api/v1/users/me", { token: second.token });
  });

  test("an admin erases a deleted account, whose email was still in the audit trail", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const leaver = await t.createUser(org.adminToken, "operator");
    await expectStatus(t, 201, "POST", "/api/v1/policies", { token: leaver.token, body: { name: "Legacy" } });
    await expectStatus(t, 204, "DELETE", `/api/v1/users/${leaver.id}`, { token: org.adminToken });
    const before = await t.request("GET", "/api/v1/audit-logs?page_size=100", { token: org.adminToken });
    expect(JSON.stringify(before.body)).toContain(leaver.email);

    const exported = await expectStatus(t, 200, "GET", `${EXPORT}?user_id=${leaver.id}`, {
      token: org.adminToken,
    });
    expect(exported.body.profile.former_email).toBe(leaver.email);
    await expectStatus(t, 200, "DELETE", `${ERASE}?user_id=${leaver.id}`, { token: org.adminToken });

    const after = await t.request("GET", "/api/v1/audit-logs?page_size=100", { token: org.adminToken });
    expect(JSON.stringify(after.body)).not.toContain(leaver.email);
    const policies = await t.request("GET", "/api/v1/policies?page_size=100", { token: org.adminToken });
    const legacy = policies.body.data.find((policy: { name: string }) => policy.name === "Legacy");
    const history = await t.request("GET", `/api/v1/policies/${legacy.id}/history`, {
      token: org.adminToken,
    });
    expect(history.body.data[0].changed_by).toBe(`erased user ${leaver.id}`);
  });

  test("SSO: the link to the identity provider goes, and signing in there again makes a new account", async () => {
    const t = await newApp();
    const org = await organizationWithOidc(t, op);
    const login = `dana-${crypto.randomUUID().slice(0, 6)}`;
    op.setAccount(login, { email: `${login}@corp.test`, email_verified: true, name: "Dana Scully" });
    const signInThroughProvider = async () =>
      expectStatus(t, 200, "POST", "/api/v1/auth/sso/oidc/callback", {
        body: await throughOidcProvider(t, op, login),
      });
    const first = await signInThroughProvider();

    const exported = await expectStatus(t, 200, "GET", EXPORT, { token: first.body.token });
    expect(exported.body.sso_identities).toEqual([
      expect.objectContaining({ provider: "oidc", issuer: op.issuer, subject: login }),
    ]);
    expect(exported.body.sessions[0].sign_in_method).toBe("sso");
    await expectStatus(t, 200, "DELETE", ERASE, { token: first.body.token });

    const audit = await t.request("GET", "/api/v1/audit-logs?page_size=100", { token: org.adminToken });
    expect(JSON.stringify(audit.body)).not.toContain(login);
    const second = await signInThroughProvider();
    expect(second.body.user.id).not.toBe(first.body.user.id);
    expect(second.body.user.email).toBe(`${login}@corp.test`);
  });
});

describe("POST /gdpr/restrict", () => {
  test("blocks password sign-in and API keys until an admin lifts it; user lists show it", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const person = await t.createUser(org.adminToken, "operator");
    const key = await t.createApiKey(person.token, ["devices:read"]);
    const device = await enrollFor(t, org.adminToken, person.id, "Field tablet");

    const restricted = await expectStatus(t, 200, "POST", RESTRICT, { token: person.token });
    expect(restricted.body).toMatchObject({ type: "restriction", status: "completed", user_id: person.id });

    for (const token of [person.token, key]) {
      const refused = await t.request("GET", "/api/v1/devices", { token });
      expect(refused.status).toBe(401);
      expect(refused.body.reason).toBe("account_restricted");
    }
    const signIn = await t.request("POST", "/api/v1/auth/login", {
      body: { email: person.email, password: TEST_PASSWORD },
    });
    expect(signIn.status).toBe(401);
    expect(signIn.body.reason).toBe("account_restricted");
    const users = await expectStatus(t, 200, "GET", "/api/v1/users?page_size=100", { token: org.adminToken });
    expect(users.body.data.find((user: { id: string }) => user.id === person.id).restricted).toBe(true);
    // Its data stays (the admin can still export it) and is not processed further: the device is still
    // managed, and its new log entries keep event and time only.
    const exported = await expectStatus(t, 200, "GET", `${EXPORT}?user_id=${person.id}`, {
      token: org.adminToken,
    });
    expect(
      exported.body.devices[0].logs.some(
        (entry: { details: object }) => Object.keys(entry.details).length > 0,
      ),
    ).toBe(true);
    // A new agent version: logged at once (an unchanged heartbeat would wait for the hourly entry).
    expect(
      (await checkIn(t, device.device_token, { agent_version: "1.9.0", facts: HEALTHY_FACTS })).status,
    ).toBe(200);
    const logs = await expectStatus(t, 200, "GET", `/api/v1/devices/${device.id}/logs?event=device.checkin`, {
      token: org.adminToken,
    });
    expect(logs.body.data[0].details).toEqual({});
    expect(logs.body.data[1].details).not.toEqual({});

    const setting = await t.request("PATCH", `/api/v1/users/${person.id}`, {
      token: org.adminToken,
      body: { restricted: true },
    });
    expect(setting.status).toBe(400);
    const lifted = await expectStatus(t, 200, "PATCH", `/api/v1/users/${person.id}`, {
      token: org.adminToken,
      body: { restricted: false },
    });
    expect(lifted.body.restricted).toBe(false);
    await t.signIn(person.email);
    await expectStatus(t, 200, "GET", "/api/v1/devices", { token: key });
  });
});

describe("POST /gdpr/object", () => {
  test("device_activity: the person's device logs keep event and time only, before and after", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const person = await t.createUser(org.adminToken, "member");
    const device = await enrollFor(t, org.adminToken, person.id, "Phone");
    const otherDevice = await enrollFor(t, org.adminToken, org.adminId, "Admin laptop");
    const logs = async (id: string) =>
      (
        await expectStatus(t, 200, "GET", `/api/v1/devices/${id}/logs?page_size=100`, {
          token: org.adminToken,
        })
      ).body.data as { event: string; details: Record<string, unknown> }[];
    expect((await logs(device.id)).some((entry) => Object.keys(entry.details).length > 0)).toBe(true);

    const objection = await expectStatus(t, 200, "POST", OBJECT, {
      token: person.token,
      body: { processing: "device_activity", reason: "I use this phone after hours" },
    });

    expect(objection.body).toMatchObject({
      type: "objection",
      status: "completed",
      processing: "device_activity",
      reason: "I use this phone after hours",
    });
    expect(objection.body.details.log_entries_reduced).toBeGreaterThan(0);
    await checkIn(t, device.device_token, { facts: { ...HEALTHY_FACTS, disk_encrypted: false } });
    const after = await logs(device.id);
    expect(after.filter((entry) => entry.event === "device.checkin")).toHaveLength(2);
    for (const entry of after) expect(entry.details).toEqual({});
    // Another person's device keeps its details.
    await checkIn(t, otherDevice.device_token, { facts: HEALTHY_FACTS });
    expect((await logs(otherDevice.id))[0]?.details).not.toEqual({});
    // The device itself is still managed: its compliance follows the new facts.
    const view = await expectStatus(t, 200, "GET", `/api/v1/devices/${device.id}`, { token: org.adminToken });
    expect(view.body.compliance.status).toBe("non_compliant");
  });

  test("another processing is recorded for the operator; the body is checked", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const person = await t.createUser(org.adminToken, "member");

    const recorded = await expectStatus(t, 200, "POST", OBJECT, {
      token: person.token,
      body: { processing: "usage_analytics", reason: "not needed for my work" },
    });
    expect(recorded.body.status).toBe("needs_review");
    expect(recorded.body.result).toContain("usage_analytics");

    // An admin answers it; it cannot be answered twice, by someone else, or from another organization.
    const answer = { status: "completed", result: "usage analytics turned off for this user in the BI tool" };
    const path = `${REQUESTS}/${recorded.body.id}`;
    expect((await t.request("PATCH", path, { token: person.token, body: answer })).status).toBe(403);
    const other = await t.createOrganization();
    expect((await t.request("PATCH", path, { token: other.adminToken, body: answer })).status).toBe(404);
    const answered = await expectStatus(t, 200, "PATCH", path, { token: org.adminToken, body: answer });
    expect(answered.body).toMatchObject({ id: recorded.body.id, status: "completed", result: answer.result });
    const twice = await t.request("PATCH", path, {
      token: org.adminToken,
      body: { ...answer, status: "rejected" },
    });
    expect(twice.status).toBe(409);
    expect(twice.body.reason).toBe("gdpr_request_not_open");
    const own = await expectStatus(t, 200, "GET", REQUESTS, { token: person.token });
    expect(own.body.data[0]).toMatchObject({ id: recorded.body.id, status: "completed" });

    const multiline = await expectStatus(t, 200, "POST", OBJECT, {
      token: person.token,
      body: { processing: "location_history", reason: "First line.\nSecond line." },
    });
    expect(multiline.body.reason).toBe("First line.\nSecond line.");
    for (const [body, field] of [
      [{ processing: "device_activity" }, "reason"],
      [{ reason: "x" }, "processing"],
      [{ processing: "Device Activity!", reason: "x" }, "processing"],
      [{ processing: "device_activity", reason: "   " }, "reason"],
    ] as const) {
      const response = await t.request("POST", OBJECT, { token: person.token, body });
      expect(response.status).toBe(400);
      expect(response.body.details).toContain(field);
    }
  });
});

describe("GET /gdpr/requests", () => {
  test("people see their own requests, admins the organization's; each is audited and sent to webhooks", async () => {
    const t = await newApp();
    if (t.target === "in-process") t.clock.set(new Date());
    const receiver = startWebhookReceiver();
    try {
      const org = await t.createOrganization();
      await expectStatus(t, 201, "POST", "/api/v1/webhooks", {
        token: org.adminToken,
        body: { url: receiver.url, events: ["gdpr.request_completed"], secret: "gdpr-webhook-secret-0123" },
      });
      const alice = await t.createUser(org.adminToken, "member");
      const bob = await t.createUser(org.adminToken, "member");
      await expectStatus(t, 200, "GET", EXPORT, { token: alice.token });
      await expectStatus(t, 200, "POST", OBJECT, {
        token: bob.token,
        body: { processing: "device_activity", reason: "r" },
      });
      await expectStatus(t, 200, "GET", `${EXPORT}?user_id=${bob.id}`, { token: org.adminToken });

      const own = await expectStatus(t, 200, "GET", REQUESTS, { token: alice.token });
      expect(own.body.total).toBe(1);
      expect(own.body.data[0]).toMatchObject({
        type: "export",
        user_id: alice.id,
        requested_by: { type: "user", id: alice.id },
      });
      const peek = await t.request("GET", `${REQUESTS}?user_id=${bob.id}`, { token: alice.token });
      expect(peek.status).toBe(403);
      const all = await expectStatus(t, 200, "GET", REQUESTS, { token: org.adminToken });
      expect(
        all.body.data.map((request: { type: string; user_id: string }) => [request.type, request.user_id]),
      ).toEqual([
        ["export", bob.id],
        ["objection", bob.id],
        ["export", alice.id],
      ]);
      const bobsExports = await expectStatus(t, 200, "GET", `${REQUESTS}?user_id=${bob.id}&type=export`, {
        token: org.adminToken,
      });
      expect(bobsExports.body.total).toBe(1);
      expect(bobsExports.body.data[0].requested_by).toEqual({ type: "user", id: org.adminId });

      const audit = await expectStatus(t, 200, "GET", "/api/v1/audit-logs?page_size=100", {
        token: org.adminToken,
      });
      const gdprActions = audit.body.data
        .filter((entry: { action: string }) => entry.action.startsWith("gdpr."))
        .map((entry: { action: string; target: { id: string } }) => [entry.action, entry.target.id]);
      expect(gdprActions).toEqual([
        ["gdpr.export", bob.id],
        ["gdpr.objection", bob.id],
        ["gdpr.export", alice.id],
      ]);

      await deliverWebhooks(t, receiver, 3);
      expect(receiver.received.map((request) => [request.payload.event, request.payload.data.type])).toEqual([
        ["gdpr.request_completed", "export"],
        ["gdpr.request_completed", "objection"],
        ["gdpr.request_completed", "export"],
      ]);
      for (const request of receiver.received) {
        expect(await verifyBothSignatures(request, "gdpr-webhook-secret-0123")).toBe(true);
        expect(request.body).not.toContain(alice.email);
        expect(request.body).not.toContain(bob.email);
      }
      expect(receiver.received[0]?.payload.data).toMatchObject({
        request_id: all.body.data[2].id,
        status: "completed",
        user_id: alice.id,
      });
    } finally {
      receiver.stop();
    }
  });
});
