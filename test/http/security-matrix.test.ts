/**
 * The route security matrix, generated from the routes the server publishes (each operation's
 * `x-bulwark-access`): for every route, no credential is a 401; a credential without the route's scope
 * is a 403 naming it; another organization's resource is a 404; agent routes take only a device token.
 * A new route is covered by these tests as soon as it is served, without a test written for it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { enrollDevice } from "../helpers/devices";
import { enableTotp } from "../helpers/mfa";
import { type OpenApiDocument, type Schema, sampleValue } from "../helpers/openapi-sample";
import { createTestApp, type TestApp, type TestResponse } from "../helpers/test-app";

interface Route {
  method: string;
  path: string;
  access: string | undefined;
  body: Record<string, unknown> | undefined;
}

let t: TestApp;
let document: OpenApiDocument;
let routes: Route[];
/** Tokens of organization A, and ids of organization B's resources, by the path segment naming them. */
const tokens: Record<string, string> = {};
const foreignIds: Record<string, string> = {};

beforeAll(async () => {
  t = await createTestApp({
    rate_limit: { unauthenticated_per_minute: 100_000 },
    webhooks: { allow_private_targets: true },
  });
  const mine = await t.createOrganization("Mine");
  tokens.admin = mine.adminToken;
  tokens.member = (await t.createUser(mine.adminToken, "member")).token;
  tokens.operator = (await t.createUser(mine.adminToken, "operator")).token;
  tokens.device = (await enrollDevice(t, mine.adminToken)).device_token;

  const theirs = await t.createOrganization("Theirs");
  const admin = theirs.adminToken;
  const created = async (path: string, body: unknown) => {
    const response = await t.request("POST", path, { token: admin, body });
    if (response.status >= 300)
      throw new Error(`${path}: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body;
  };
  foreignIds.users = (
    await created("/api/v1/users", {
      email: `theirs-${crypto.randomUUID().slice(0, 8)}@example.com`,
      name: "Theirs",
      role: "member",
      password: "correct-horse-battery",
    })
  ).id;
  foreignIds.policies = (await created("/api/v1/policies", { name: "Theirs" })).id;
  foreignIds["enrollment-tokens"] = (await created("/api/v1/enrollment-tokens", {})).id;
  foreignIds["api-keys"] = (
    await created("/api/v1/auth/api-keys", { name: "theirs", scopes: ["devices:read"] })
  ).id;
  foreignIds.webhooks = (
    await created("/api/v1/webhooks", {
      url: "http://127.0.0.1:9/hook",
      events: ["*"],
      secret: "x".repeat(20),
    })
  ).id;
  const device = await enrollDevice(t, admin);
  foreignIds.devices = device.id;
  foreignIds.wipe_id = (await created(`/api/v1/devices/${device.id}/wipe`, { reason: "theirs" })).wipe_id;
  foreignIds.mfa = (await enableTotp(t, admin)).methodId;

  // An organization that requires MFA, and a user of it without a factor: a session only for setting one up.
  const strict = await t.createOrganization("Strict");
  await enableTotp(t, strict.adminToken);
  await t.request("PATCH", "/api/v1/organizations/current", {
    token: strict.adminToken,
    body: { require_mfa: true },
  });
  tokens.setupPending = (await t.createUser(strict.adminToken, "admin")).token;
  tokens.apiKey = await t.createApiKey(mine.adminToken, ["admin"]);

  document = (await t.request("GET", "/api/v1/openapi.json")).body;
  routes = Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({
      method: method.toUpperCase(),
      path,
      access: operation["x-bulwark-access"] as string | undefined,
      body: operation.requestBody?.content?.["application/json"]?.schema,
    })),
  );
}, 60_000);

afterAll(async () => {
  await t?.close();
});

/** The path with every id of organization B (unknown resources get a random id). */
function foreignPath(path: string): string {
  return path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    if (name === "version") return "1";
    if (name === "wipe_id") return foreignIds.wipe_id ?? crypto.randomUUID();
    const resource = Object.keys(foreignIds).find((key) => path.includes(`/${key}/{${name}}`));
    return (resource && foreignIds[resource]) || crypto.randomUUID();
  });
}

/** A body that passes validation, so that the answer is about who is asking. */
function validBody(route: Route): unknown {
  if (!route.body) return undefined;
  const valueFor = (name: string, schema: Schema) => {
    if (name === "policy_id") return foreignIds.policies;
    if (name === "device_ids") return [foreignIds.devices];
    if (name === "public_key")
      return Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64");
    if (schema.format === "uuid") return crypto.randomUUID();
    return undefined;
  };
  // Every top-level field, optional ones too: some rules (a suspension needs a reason) are checked
  // before the resource is looked up.
  const properties = (route.body.properties ?? {}) as Record<string, Schema>;
  return Object.fromEntries(
    Object.entries(properties).map(([name, schema]) => [name, sampleValue(document, schema, valueFor, name)]),
  );
}

function send(route: Route, token: string | undefined, path = foreignPath(route.path)) {
  return t.request(route.method, path, { token, body: validBody(route) });
}

function expectErrorBody(response: TestResponse, status: number, where: string) {
  expect(response.status, `${where}: ${JSON.stringify(response.body)}`).toBe(status);
  expect(response.body.code, where).toBe(status);
  expect(typeof response.body.message, where).toBe("string");
}

const ROLE_WITHOUT: Record<string, string> = {
  admin: "operator",
  "users:write": "operator",
  "audit:read": "operator",
};

describe("every route", () => {
  test("publishes who may call it, or is one of the known public routes", () => {
    const publicRoutes = routes
      .filter((route) => route.access === undefined)
      .map((route) => `${route.method} ${route.path}`);
    expect(publicRoutes.sort()).toEqual(
      [
        "GET /.well-known/jwks.json",
        "GET /api/v1/docs",
        "GET /api/v1/health",
        // Guarded by its own metrics.token, not by a user's scope (test/http/operations.test.ts).
        "GET /metrics",
        "GET /api/v1/openapi.json",
        "POST /api/v1/auth/login",
        "POST /api/v1/auth/mfa/verify",
        "POST /api/v1/auth/mfa/webauthn/authentication-options",
        "POST /api/v1/auth/refresh",
        "POST /api/v1/auth/sso/discover",
        "GET /api/v1/auth/sso/oidc/authorize",
        "POST /api/v1/auth/sso/oidc/callback",
        "GET /api/v1/auth/sso/saml/metadata",
        "GET /api/v1/auth/sso/saml/login",
        "POST /api/v1/auth/sso/saml/acs",
        "POST /api/v1/auth/sso/saml/token",
        "POST /api/v1/devices/enroll",
        "GET /api/v1/agent/ca.pem",
        // The executable an enrolling machine fetches before it has any credential.
        "GET /api/v1/agent/download",
        "GET /api/v1/agent/download.sha256",
        "GET /api/v1/agent/server-ca",
        // A phone's one-time profile link: the link is the credential (test/http/phones.test.ts).
        "GET /api/v1/phone-profiles/{token}",
      ].sort(),
    );
  });

  test("without a credential: 401 with the error body", async () => {
    const secured = routes.filter((route) => route.access !== undefined);
    expect(secured.length).toBeGreaterThan(40);
    for (const route of secured)
      expectErrorBody(await send(route, undefined), 401, `${route.method} ${route.path}`);
  });

  test("with a credential that lacks the route's scope: 403 naming the scope", async () => {
    const scoped = routes.filter(
      (route) => route.access && !["authenticated", "self", "user", "device"].includes(route.access),
    );
    for (const route of scoped) {
      const access = route.access as string;
      const role = ROLE_WITHOUT[access] ?? "member";
      const response = await send(route, tokens[role]);
      const where = `${route.method} ${route.path} as ${role}`;
      expectErrorBody(response, 403, where);
      expect(response.body.details, where).toContain(access);
    }
  });

  test("an administrator of another organization gets 404 for this one's resources, never the data", async () => {
    const withIds = routes.filter(
      (route) => route.path.includes("{") && route.access !== undefined && route.access !== "device",
    );
    expect(withIds.length).toBeGreaterThan(20);
    for (const route of withIds) {
      const response = await send(route, tokens.admin);
      expectErrorBody(response, 404, `${route.method} ${foreignPath(route.path)}`);
    }
  });

  test("agent routes take only a device token: a user's token is a 401, another organization's wipe a 404", async () => {
    const agentRoutes = routes.filter((route) => route.access === "device");
    expect(agentRoutes.length).toBeGreaterThan(0);
    for (const route of agentRoutes) {
      expectErrorBody(
        await send(route, tokens.admin),
        401,
        `${route.method} ${route.path} with a user token`,
      );
      if (route.path.includes("{wipe_id}"))
        expectErrorBody(await send(route, tokens.device), 404, `${route.method} ${route.path} (their wipe)`);
    }
  });

  test("routes for signed-in users only (MFA settings) refuse an API key, even one with admin", async () => {
    const userOnly = routes.filter((route) => route.access === "user");
    expect(userOnly.length).toBeGreaterThan(5);
    for (const route of userOnly) {
      const response = await send(route, tokens.apiKey);
      const where = `${route.method} ${route.path} with an API key`;
      expectErrorBody(response, 403, where);
      expect(response.body.reason, where).toBe("api_key_not_allowed");
    }
  });

  test("a session that must set up MFA first opens only its profile, sign-out and the MFA routes", async () => {
    const open = new Set(["self", "user"]);
    const isSignOut = (route: Route) => route.path === "/api/v1/auth/logout";
    // Sign-out last: it ends the session.
    const secured = routes.filter((route) => route.access && route.access !== "device");
    for (const route of [...secured.filter((route) => !isSignOut(route)), ...secured.filter(isSignOut)]) {
      const response = await send(route, tokens.setupPending);
      const where = `${route.method} ${route.path} before MFA is set up`;
      if (open.has(route.access as string)) {
        expect(response.body?.reason, where).not.toBe("mfa_setup_required");
        expect([401, 403], where).not.toContain(response.status);
        continue;
      }
      expectErrorBody(response, 403, where);
      expect(response.body.reason, where).toBe("mfa_setup_required");
      const documented = document.paths[route.path]?.[route.method.toLowerCase()]?.responses ?? {};
      expect(Object.keys(documented), `${where}: 403 in the OpenAPI document`).toContain("403");
      expect(response.body.details, where).toBe("multi-factor authentication must be set up first");
    }
  });

  test("a device token opens no other route", async () => {
    for (const route of routes.filter((route) => route.access !== undefined && route.access !== "device"))
      expectErrorBody(
        await send(route, tokens.device),
        401,
        `${route.method} ${route.path} with a device token`,
      );
  });
});
