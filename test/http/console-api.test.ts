/**
 * The API the administration console leans on: searching and filtering the device list, the devices
 * summary of the dashboard, finding an email's single sign-on connections, and the console's own SSO
 * callback as a redirect_uri every connection allows.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { withTransaction } from "../../src/db/client";
import { organizations } from "../../src/db/tables";
import { checkIn, enrollDevice, HEALTHY_FACTS, wipeDevice } from "../helpers/devices";
import {
  authorizeOidc,
  OIDC_CALLBACK,
  organizationWithOidc,
  startOidcProvider,
  type TestOidcProvider,
} from "../helpers/oidc-provider";
import { createSamlIdp } from "../helpers/saml-idp";
import { freshTestApps, inProcessTest, type TestApp } from "../helpers/test-app";

const DEVICES = "/api/v1/devices";
const DISCOVER = "/api/v1/auth/sso/discover";

const newApp = freshTestApps({
  // The test provider runs on plain http on loopback.
  auth: { oidc_allow_insecure_issuers: true, oidc_allow_private_issuers: true },
  rate_limit: { unauthenticated_per_minute: 100_000 },
});

let op: TestOidcProvider;
beforeAll(async () => {
  op = await startOidcProvider({ redirectUris: [OIDC_CALLBACK] });
});
afterAll(() => op.close());

function randomState() {
  return crypto.randomUUID().replaceAll("-", "");
}

/** The console's SSO callback page on this app's server. */
function consoleCallback(t: TestApp) {
  return `${t.config.server.base_url.replace(/\/+$/, "")}/console/sso/callback`;
}

/** Device names of one GET /devices answer, checking that total counts exactly what was listed. */
async function listedNames(t: TestApp, token: string, query: Record<string, string>) {
  const response = await t.request("GET", `${DEVICES}?${new URLSearchParams(query)}`, { token });
  expect(response.status, JSON.stringify(response.body)).toBe(200);
  expect(response.body.total).toBe(response.body.data.length);
  return (response.body.data as { device_name: string }[]).map((item) => item.device_name).sort();
}

describe("GET /devices?q: search by device name", () => {
  test("finds a part of the name in any case, and combines with the other filters", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const other = await t.createOrganization();
    await enrollDevice(t, org.adminToken, { device_name: "Alice's MacBook", platform: "macos" });
    await enrollDevice(t, org.adminToken, { device_name: "Bob's ThinkPad", platform: "linux" });
    const carol = await enrollDevice(t, org.adminToken, {
      device_name: "Carol's old MacBook Air",
      platform: "macos",
    });
    await enrollDevice(t, other.adminToken, { device_name: "Their MacBook", platform: "macos" });

    for (const q of ["macbook", "MACBOOK", "MacBook"])
      expect(await listedNames(t, org.adminToken, { q })).toEqual([
        "Alice's MacBook",
        "Carol's old MacBook Air",
      ]);
    expect(await listedNames(t, org.adminToken, { q: "thinkpad" })).toEqual(["Bob's ThinkPad"]);
    expect(await listedNames(t, org.adminToken, { q: "'s " })).toEqual([
      "Alice's MacBook",
      "Bob's ThinkPad",
      "Carol's old MacBook Air",
    ]);
    expect(await listedNames(t, org.adminToken, { q: "Surface" })).toEqual([]);
    expect(await listedNames(t, org.adminToken, { q: "macbook", platform: "linux" })).toEqual([]);

    const suspended = await t.request("PUT", `${DEVICES}/${carol.id}/status`, {
      token: org.adminToken,
      body: { status: "suspended", reason: "left the company" },
    });
    expect(suspended.status).toBe(200);
    expect(await listedNames(t, org.adminToken, { q: "macbook", status: "suspended" })).toEqual([
      "Carol's old MacBook Air",
    ]);
    expect(await listedNames(t, org.adminToken, { q: "macbook", status: "online" })).toEqual([
      "Alice's MacBook",
    ]);

    // Pages of a search count only what it matches.
    const paged = await t.request("GET", `${DEVICES}?q=macbook&page_size=1`, { token: org.adminToken });
    expect(paged.body).toMatchObject({ total: 2, page_size: 1, total_pages: 2 });
    expect(paged.body.data).toHaveLength(1);
  });

  test("%, _ and \\ are plain characters, not wildcards", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    for (const device_name of ["100% Kiosk", "1000 Kiosk", "lab_pc", "lab-pc", "C:\\Laptop", "C:Laptop"])
      await enrollDevice(t, org.adminToken, { device_name });

    expect(await listedNames(t, org.adminToken, { q: "%" })).toEqual(["100% Kiosk"]);
    expect(await listedNames(t, org.adminToken, { q: "0%" })).toEqual(["100% Kiosk"]);
    expect(await listedNames(t, org.adminToken, { q: "_" })).toEqual(["lab_pc"]);
    expect(await listedNames(t, org.adminToken, { q: "lab_" })).toEqual(["lab_pc"]);
    expect(await listedNames(t, org.adminToken, { q: "\\" })).toEqual(["C:\\Laptop"]);
    expect(await listedNames(t, org.adminToken, { q: ":\\l" })).toEqual(["C:\\Laptop"]);
    expect(await listedNames(t, org.adminToken, { q: "\\%" })).toEqual([]);
  });

  test("an empty or over-long q is a 400 naming q", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    for (const q of ["", "x".repeat(201)]) {
      const response = await t.request("GET", `${DEVICES}?q=${q}`, { token: org.adminToken });
      expect(response.status).toBe(400);
      expect(response.body.reason).toBe("validation_failed");
      expect(response.body.errors.map((error: { field: string }) => error.field)).toEqual(["q"]);
    }
    expect(
      (await t.request("GET", `${DEVICES}?q=${"x".repeat(200)}`, { token: org.adminToken })).status,
    ).toBe(200);
  });
});

describe("GET /devices?compliance", () => {
  test("lists the devices of one compliance status; each item carries it", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const healthy = await enrollDevice(t, org.adminToken, { device_name: "Healthy" });
    const broken = await enrollDevice(t, org.adminToken, { device_name: "Unencrypted" });
    await enrollDevice(t, org.adminToken, { device_name: "Silent" });
    expect((await checkIn(t, healthy.device_token, { facts: HEALTHY_FACTS })).status).toBe(200);
    expect(
      (await checkIn(t, broken.device_token, { facts: { ...HEALTHY_FACTS, disk_encrypted: false } })).status,
    ).toBe(200);

    expect(await listedNames(t, org.adminToken, { compliance: "compliant" })).toEqual(["Healthy"]);
    expect(await listedNames(t, org.adminToken, { compliance: "non_compliant" })).toEqual(["Unencrypted"]);
    expect(await listedNames(t, org.adminToken, { compliance: "unknown" })).toEqual(["Silent"]);
    expect(await listedNames(t, org.adminToken, { compliance: "non_compliant", q: "healthy" })).toEqual([]);

    const all = await t.request("GET", DEVICES, { token: org.adminToken });
    const statusOf = Object.fromEntries(
      all.body.data.map((item: { device_name: string; compliance_status: string }) => [
        item.device_name,
        item.compliance_status,
      ]),
    );
    expect(statusOf).toEqual({ Healthy: "compliant", Unencrypted: "non_compliant", Silent: "unknown" });

    // The device becomes compliant: the filter follows at once.
    await checkIn(t, broken.device_token, { facts: HEALTHY_FACTS });
    expect(await listedNames(t, org.adminToken, { compliance: "compliant" })).toEqual([
      "Healthy",
      "Unencrypted",
    ]);
    expect(await listedNames(t, org.adminToken, { compliance: "non_compliant" })).toEqual([]);
  });

  test("a value outside compliant, non_compliant and unknown is a 400 naming compliance", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const response = await t.request("GET", `${DEVICES}?compliance=noncompliant`, { token: org.adminToken });
    expect(response.status).toBe(400);
    expect(response.body.reason).toBe("validation_failed");
    expect(response.body.errors.map((error: { field: string }) => error.field)).toEqual(["compliance"]);
  });
});

describe("GET /devices/summary", () => {
  test("counts the organization's devices by status and compliance, zeros included, and follows changes", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const other = await t.createOrganization();
    await enrollDevice(t, other.adminToken);
    const auditor = await t.createUser(org.adminToken, "auditor");
    const summary = async () => {
      const response = await t.request("GET", `${DEVICES}/summary`, { token: auditor.token });
      expect(response.status, JSON.stringify(response.body)).toBe(200);
      return response.body;
    };

    expect(await summary()).toEqual({
      total: 0,
      by_status: { online: 0, offline: 0, suspended: 0, wiped: 0, pending: 0 },
      by_compliance: { compliant: 0, non_compliant: 0, unknown: 0 },
    });

    const first = await enrollDevice(t, org.adminToken);
    const second = await enrollDevice(t, org.adminToken);
    await enrollDevice(t, org.adminToken);
    await checkIn(t, first.device_token, { facts: HEALTHY_FACTS });
    await checkIn(t, second.device_token, { facts: { ...HEALTHY_FACTS, disk_encrypted: false } });
    expect(await summary()).toEqual({
      total: 3,
      by_status: { online: 3, offline: 0, suspended: 0, wiped: 0, pending: 0 },
      by_compliance: { compliant: 1, non_compliant: 1, unknown: 1 },
    });

    const suspended = await t.request("PUT", `${DEVICES}/${second.id}/status`, {
      token: org.adminToken,
      body: { status: "suspended", reason: "reported stolen" },
    });
    expect(suspended.status).toBe(200);
    const afterSuspension = await summary();
    expect(afterSuspension.total).toBe(3);
    expect(afterSuspension.by_status).toEqual({ online: 2, offline: 0, suspended: 1, wiped: 0, pending: 0 });

    // Wiped, then deleted: counted as wiped until it is gone, and no longer in the compliance counts.
    await wipeDevice(t, org.adminToken, first, "retired");
    expect(await summary()).toEqual({
      total: 3,
      by_status: { online: 1, offline: 0, suspended: 1, wiped: 1, pending: 0 },
      by_compliance: { compliant: 0, non_compliant: 1, unknown: 1 },
    });
    expect((await t.request("DELETE", `${DEVICES}/${first.id}`, { token: org.adminToken })).status).toBe(204);
    expect(await summary()).toEqual({
      total: 2,
      by_status: { online: 1, offline: 0, suspended: 1, wiped: 0, pending: 0 },
      by_compliance: { compliant: 0, non_compliant: 1, unknown: 1 },
    });

    // The other organization sees only its own device.
    const theirs = await t.request("GET", `${DEVICES}/summary`, { token: other.adminToken });
    expect(theirs.body).toMatchObject({ total: 1, by_status: { online: 1 } });
  });

  test("a wiped device leaves the non-compliant count and the non-compliant list; a retired one leaves everything", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const summary = async () =>
      (await t.request("GET", `${DEVICES}/summary`, { token: org.adminToken })).body as {
        total: number;
        by_status: Record<string, number>;
        by_compliance: Record<string, number>;
      };
    const unencrypted = { facts: { ...HEALTHY_FACTS, disk_encrypted: false } };
    const lost = await enrollDevice(t, org.adminToken, { device_name: "Lost laptop" });
    const stolen = await enrollDevice(t, org.adminToken, { device_name: "Stolen laptop" });
    const kept = await enrollDevice(t, org.adminToken, { device_name: "Kept laptop" });
    for (const device of [lost, stolen, kept]) await checkIn(t, device.device_token, unencrypted);
    expect((await summary()).by_compliance).toEqual({ compliant: 0, non_compliant: 3, unknown: 0 });

    // Wiped while non-compliant: it is no longer managed, and what it last reported no longer holds.
    await wipeDevice(t, org.adminToken, lost, "lost on a train");
    const wiped = await t.request("GET", `${DEVICES}/${lost.id}`, { token: org.adminToken });
    expect(wiped.body).toMatchObject({ status: "wiped", facts: null, compliance: { status: "unknown" } });
    expect(await summary()).toEqual({
      total: 3,
      by_status: { online: 2, offline: 0, suspended: 0, wiped: 1, pending: 0 },
      by_compliance: { compliant: 0, non_compliant: 2, unknown: 0 },
    });
    // The dashboard's number opens the list it counts: the wiped device is not in it, under any value.
    expect(await listedNames(t, org.adminToken, { compliance: "non_compliant" })).toEqual([
      "Kept laptop",
      "Stolen laptop",
    ]);
    for (const compliance of ["compliant", "unknown"])
      expect(await listedNames(t, org.adminToken, { compliance })).toEqual([]);
    expect(await listedNames(t, org.adminToken, { compliance: "non_compliant", status: "wiped" })).toEqual(
      [],
    );
    expect(await listedNames(t, org.adminToken, { status: "wiped" })).toEqual(["Lost laptop"]);
    // Paged, the total still counts what the filter lists.
    const firstPage = await t.request("GET", `${DEVICES}?compliance=non_compliant&page_size=1`, {
      token: org.adminToken,
    });
    expect(firstPage.body).toMatchObject({ total: 2, total_pages: 2 });

    // Retired (never wiped): gone from every count; the wiped one, deleted: gone too.
    const retired = await t.request("POST", `${DEVICES}/${stolen.id}/retire`, {
      token: org.adminToken,
      body: { reason: "stolen, never checked in again" },
    });
    expect(retired.status).toBe(200);
    expect((await t.request("DELETE", `${DEVICES}/${lost.id}`, { token: org.adminToken })).status).toBe(204);
    expect(await summary()).toEqual({
      total: 1,
      by_status: { online: 1, offline: 0, suspended: 0, wiped: 0, pending: 0 },
      by_compliance: { compliant: 0, non_compliant: 1, unknown: 0 },
    });
    expect(await listedNames(t, org.adminToken, { compliance: "non_compliant" })).toEqual(["Kept laptop"]);
  });

  test("is its own route, not a device id; a device is still found by its id", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken);
    const summary = await t.request("GET", `${DEVICES}/summary`, { token: org.adminToken });
    expect(summary.status).toBe(200);
    expect(summary.body.total).toBe(1);
    const device = await t.request("GET", `${DEVICES}/${enrolled.id}`, { token: org.adminToken });
    expect(device.status).toBe(200);
    expect(device.body.id).toBe(enrolled.id);
    const member = await t.createUser(org.adminToken, "member");
    const refused = await t.request("GET", `${DEVICES}/summary`, { token: member.token });
    expect(refused.status).toBe(403);
    expect(refused.body.details).toContain("devices:read");
    expect((await t.request("GET", `${DEVICES}/summary`)).status).toBe(401);
  });
});

describe("GET /devices/:id latest_wipe", () => {
  test("names the newest wipe request, so a page opened later follows a pending wipe to its end", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const device = await enrollDevice(t, org.adminToken);
    const view = async () =>
      (await t.request("GET", `${DEVICES}/${device.id}`, { token: org.adminToken })).body.latest_wipe;
    expect(await view()).toBeNull();

    const wipe = await t.request("POST", `${DEVICES}/${device.id}/wipe`, {
      token: org.adminToken,
      body: { reason: "Lost at the airport" },
    });
    expect(wipe.status).toBe(202);
    expect(await view()).toMatchObject({
      wipe_id: wipe.body.wipe_id,
      status: "pending",
      reason: "Lost at the airport",
      completed_at: null,
    });
    const done = await t.request("POST", `/api/v1/agent/wipes/${wipe.body.wipe_id}/complete`, {
      token: device.device_token,
      body: { success: true },
    });
    expect(done.status).toBe(200);
    expect(await view()).toMatchObject({ wipe_id: wipe.body.wipe_id, status: "completed" });
  });
});

describe("the OpenAPI document", () => {
  test("lists the summary, the list's new filters and the discovery, with their error responses", async () => {
    const t = await newApp();
    const document = (await t.request("GET", "/api/v1/openapi.json")).body;
    const summary = document.paths["/api/v1/devices/summary"]?.get;
    expect(summary?.["x-bulwark-access"]).toBe("devices:read");
    expect(Object.keys(summary?.responses ?? {})).toEqual(
      expect.arrayContaining(["200", "401", "403", "429"]),
    );
    expect(summary?.responses["200"].content["application/json"].schema.$ref).toEndWith("/DeviceSummary");
    const list = document.paths["/api/v1/devices"].get;
    const parameters = list.parameters.map((parameter: { name: string }) => parameter.name);
    expect(parameters).toContain("q");
    expect(parameters).toContain("compliance");
    const discover = document.paths[DISCOVER]?.post;
    expect(discover?.security).toEqual([]);
    expect(Object.keys(discover?.responses ?? {})).toEqual(expect.arrayContaining(["200", "400", "429"]));
  });
});

describe("POST /auth/sso/discover", () => {
  const IDP_ENTITY = "https://idp.corp.test/metadata";
  const idp = createSamlIdp({ entityId: IDP_ENTITY, ssoUrl: "https://idp.corp.test/sso" });

  /** An enterprise organization with an enabled SAML connection for `domains`. */
  async function organizationWithSaml(t: TestApp, name: string, domains: string[]) {
    const org = await t.createOrganization(name);
    await t.setPlan(org.organizationId, "enterprise");
    const saved = await t.request("PATCH", "/api/v1/organizations/current", {
      token: org.adminToken,
      body: {
        sso: {
          saml: {
            enabled: true,
            idp_entity_id: IDP_ENTITY,
            idp_sso_url: "https://idp.corp.test/sso",
            idp_certificate: idp.certificate,
            redirect_uris: ["https://console.corp.test/sso/saml-callback"],
            allowed_domains: domains,
          },
        },
      },
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    return org;
  }

  const discover = (t: TestApp, email: unknown) => t.request("POST", DISCOVER, { body: { email } });

  test("lists the enabled OIDC and SAML connections of the email's domain, without authentication", async () => {
    const t = await newApp();
    const corpOrg = await organizationWithSaml(t, "Corp", ["corp.test"]);
    const saved = await t.request("PATCH", "/api/v1/organizations/current", {
      token: corpOrg.adminToken,
      body: {
        sso: {
          oidc: {
            enabled: true,
            issuer: op.issuer,
            client_id: op.client_id,
            client_secret: op.client_secret,
            redirect_uris: [OIDC_CALLBACK],
            allowed_domains: ["corp.test", "corp-mail.test"],
          },
        },
      },
    });
    expect(saved.status).toBe(200);
    const elsewhere = await organizationWithSaml(t, "Elsewhere SAML", ["elsewhere.test"]);
    // With several organizations, the operator confirms which one each domain signs in with.
    for (const domain of ["corp.test", "corp-mail.test"])
      await t.confirmSsoDomain(corpOrg.organizationId, domain);
    await t.confirmSsoDomain(elsewhere.organizationId, "elsewhere.test");

    const corp = await discover(t, "Dana.Example@CORP.test");
    expect(corp.status).toBe(200);
    expect(corp.body).toEqual({
      connections: [
        {
          type: "oidc",
          organization_id: corpOrg.organizationId,
          organization_name: "Corp",
          client_id: op.client_id,
        },
        { type: "saml", organization_id: corpOrg.organizationId, organization_name: "Corp" },
      ],
    });
    expect((await discover(t, "x@corp-mail.test")).body.connections).toEqual([
      {
        type: "oidc",
        organization_id: corpOrg.organizationId,
        organization_name: "Corp",
        client_id: op.client_id,
      },
    ]);
    expect(
      (await discover(t, "x@elsewhere.test")).body.connections.map((item: { type: string }) => item.type),
    ).toEqual(["saml"]);

    // The item is enough to start the sign-in it names.
    const started = await authorizeOidc(t, {
      client_id: corp.body.connections[0].client_id,
      redirect_uri: OIDC_CALLBACK,
      scope: "openid profile email",
      state: randomState(),
    });
    expect(started.status).toBe(302);
    expect(started.location).toStartWith(`${op.issuer}/auth?`);
  });

  test("an email no connection lists gets an empty list, never a 404: the domain must match exactly", async () => {
    const t = await newApp();
    const org = await organizationWithOidc(t, op);
    // The executable's first start made an organization of its own: the operator confirms the domain.
    await t.confirmSsoDomain(org.organizationId, "corp.test");
    for (const email of [
      "someone@nowhere.test",
      "a@sub.corp.test",
      "a@corp.test.evil.test",
      "a@xcorp.test",
    ]) {
      const response = await discover(t, email);
      expect(response.status, email).toBe(200);
      expect(response.body, email).toEqual({ connections: [] });
    }
    expect((await discover(t, "a@corp.test")).body.connections).toHaveLength(1);
  });

  test("a disabled connection is not listed", async () => {
    const t = await newApp();
    const org = await organizationWithOidc(t, op);
    await t.confirmSsoDomain(org.organizationId, "corp.test");
    expect((await discover(t, "a@corp.test")).body.connections).toHaveLength(1);
    const disabled = await t.request("PATCH", "/api/v1/organizations/current", {
      token: org.adminToken,
      body: { sso: { oidc: { enabled: false } } },
    });
    expect(disabled.status).toBe(200);
    expect((await discover(t, "a@corp.test")).body).toEqual({ connections: [] });
  });

  inProcessTest("SAML of an organization no longer on the enterprise plan is not offered", async () => {
    const t = await newApp();
    const org = await organizationWithSaml(t, "Downgraded", ["corp.test"]);
    expect((await discover(t, "a@corp.test")).body.connections).toHaveLength(1);
    // `org set-plan` refuses this while SAML is enabled; a database from before that rule may hold it.
    await withTransaction(
      t.deps.db,
      async (tx) =>
        await tx
          .update(organizations)
          .set({ plan: "standard" })
          .where(eq(organizations.id, org.organizationId)),
    );
    expect((await discover(t, "a@corp.test")).body).toEqual({ connections: [] });
  });

  test("something that is not an email address is a 400 naming email", async () => {
    const t = await newApp();
    for (const email of ["corp.test", "a@b", "two words@corp.test", "", `${"a".repeat(320)}@corp.test`, 42]) {
      const response = await discover(t, email);
      expect(response.status, String(email)).toBe(400);
      expect(response.body.reason).toBe("validation_failed");
      expect(response.body.errors.map((error: { field: string }) => error.field)).toEqual(["email"]);
    }
    const missing = await t.request("POST", DISCOVER, { body: {} });
    expect(missing.status).toBe(400);
    expect(missing.body.errors.map((error: { field: string }) => error.field)).toEqual(["email"]);
  });
});

describe("the console's SSO callback is a redirect_uri of every connection", () => {
  test("OIDC: a whole sign-in through the console's callback, which the connection does not list; other URIs stay refused", async () => {
    const t = await newApp();
    const callback = consoleCallback(t);
    // A provider that knows the console's callback; the Bulwark connection lists no redirect URI at
    // all, which is allowed: only the console signs in with it.
    const provider = await startOidcProvider({ redirectUris: [callback] });
    try {
      const org = await organizationWithOidc(t, provider, { redirect_uris: [] });
      const settings = await t.request("GET", "/api/v1/organizations/current", { token: org.adminToken });
      expect(settings.body.sso.oidc).toMatchObject({ enabled: true, redirect_uris: [] });

      const state = randomState();
      const started = await authorizeOidc(t, {
        client_id: provider.client_id,
        redirect_uri: callback,
        scope: "openid profile email",
        state,
      });
      expect(started.status, started.text).toBe(302);
      const url = new URL(started.location ?? "");
      expect(`${url.origin}${url.pathname}`).toBe(`${provider.issuer}/auth`);
      expect(url.searchParams.get("redirect_uri")).toBe(callback);

      provider.setAccount("erin", { email: "erin@corp.test", email_verified: true, name: "Erin Example" });
      const back = await provider.signIn(url.toString(), "erin");
      expect(`${back.origin}${back.pathname}`).toBe(callback);
      expect(back.searchParams.get("state")).toBe(state);
      const signedIn = await t.request("POST", "/api/v1/auth/sso/oidc/callback", {
        body: { code: back.searchParams.get("code"), state, iss: back.searchParams.get("iss") },
      });
      expect(signedIn.status, JSON.stringify(signedIn.body)).toBe(200);
      expect(signedIn.body.user).toMatchObject({
        email: "erin@corp.test",
        organization_id: org.organizationId,
      });

      for (const redirect_uri of [
        OIDC_CALLBACK,
        "https://attacker.example/console/sso/callback",
        `${callback}/extra`,
        `${callback}?next=/x`,
        callback.replace("/console/", "/Console/"),
      ]) {
        const refused = await authorizeOidc(t, {
          client_id: provider.client_id,
          redirect_uri,
          state: randomState(),
        });
        expect(refused.status, redirect_uri).toBe(400);
        expect(refused.location).toBeNull();
        expect(JSON.parse(refused.text).reason).toBe("sso_redirect_uri_not_allowed");
      }
    } finally {
      await provider.close();
    }
  });

  test("SAML: the login redirects to the IdP for the console's callback; an unlisted URI is a 400", async () => {
    const t = await newApp();
    const idp = createSamlIdp({
      entityId: "https://idp.corp.test/metadata",
      ssoUrl: "https://idp.corp.test/sso",
    });
    const org = await t.createOrganization();
    await t.setPlan(org.organizationId, "enterprise");
    const saved = await t.request("PATCH", "/api/v1/organizations/current", {
      token: org.adminToken,
      body: {
        sso: {
          saml: {
            enabled: true,
            idp_entity_id: "https://idp.corp.test/metadata",
            idp_sso_url: "https://idp.corp.test/sso",
            idp_certificate: idp.certificate,
            redirect_uris: ["https://console.corp.test/sso/saml-callback"],
            allowed_domains: ["corp.test"],
          },
        },
      },
    });
    expect(saved.status).toBe(200);
    const login = (redirect_uri: string) =>
      t.fetch(
        `/api/v1/auth/sso/saml/login?${new URLSearchParams({ organization_id: org.organizationId, redirect_uri, state: randomState() })}`,
        { redirect: "manual" },
      );
    const started = await login(consoleCallback(t));
    expect(started.status).toBe(302);
    expect(started.headers.get("location")).toStartWith("https://idp.corp.test/sso?SAMLRequest=");
    const refused = await login("https://attacker.example/console/sso/callback");
    expect(refused.status).toBe(400);
    expect((await refused.json()).reason).toBe("sso_redirect_uri_not_allowed");
  });
});
