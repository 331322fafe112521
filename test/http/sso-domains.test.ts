/**
 * An email domain signs in with one organization: another tenant can neither claim it nor, on an
 * installation of several organizations, be found by it until the operator confirmed its claim.
 */
import { describe, expect, test } from "bun:test";
import { eq } from "drizzle-orm";
import { withTransaction } from "../../src/db/client";
import { firstRow } from "../../src/db/first-row";
import { organizations } from "../../src/db/tables";
import { createSamlIdp } from "../helpers/saml-idp";
import { freshTestApps, inProcessTest, type TestApp } from "../helpers/test-app";

const IDP_ENTITY = "https://idp.a.test/metadata";
const IDP_SSO = "https://idp.a.test/sso";
const CALLBACK = "https://console.a.test/sso/saml-callback";
const SAML = "/api/v1/auth/sso/saml";

const newApp = freshTestApps({ rate_limit: { unauthenticated_per_minute: 10_000 } });
const idp = createSamlIdp({ entityId: IDP_ENTITY, ssoUrl: IDP_SSO });

/** An enterprise organization named `name` whose SAML connection lists `domains`; the answer to saving it. */
async function organizationWithSaml(t: TestApp, name: string, domains: string[]) {
  const org = await t.createOrganization(name);
  await t.setPlan(org.organizationId, "enterprise");
  const saved = await saveDomains(t, org.adminToken, domains);
  return { ...org, saved };
}

function saveDomains(t: TestApp, token: string, domains: string[]) {
  return t.request("PATCH", "/api/v1/organizations/current", {
    token,
    body: {
      sso: {
        saml: {
          enabled: true,
          idp_entity_id: IDP_ENTITY,
          idp_sso_url: IDP_SSO,
          idp_certificate: idp.certificate,
          redirect_uris: [CALLBACK],
          allowed_domains: domains,
        },
      },
    },
  });
}

/** A new person's SP-initiated SAML sign-in at `organizationId`: where the ACS sends the browser. */
async function signInThroughIdp(t: TestApp, organizationId: string, email: string): Promise<URL> {
  const metadata = await (await t.fetch(`${SAML}/metadata?organization_id=${organizationId}`, {})).text();
  const query = new URLSearchParams({
    organization_id: organizationId,
    redirect_uri: CALLBACK,
    state: crypto.randomUUID().replaceAll("-", ""),
  });
  const login = await t.fetch(`${SAML}/login?${query}`, { redirect: "manual" });
  const response = await idp.respond(metadata, login.headers.get("location") ?? "", {
    nameId: crypto.randomUUID(),
    email,
  });
  const acs = await t.fetch(`${SAML}/acs`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ SAMLResponse: response, RelayState: "" }).toString(),
  });
  return new URL(acs.headers.get("location") ?? "");
}

const discover = async (t: TestApp, email: string) =>
  (await t.request("POST", "/api/v1/auth/sso/discover", { body: { email } })).body.connections as {
    organization_id: string;
  }[];

describe("a domain belongs to one organization", () => {
  test("another organization cannot claim it, in any case; the refusal does not say who has it", async () => {
    const t = await newApp();
    const a = await organizationWithSaml(t, "Acme", ["a.test"]);
    expect(a.saved.status).toBe(200);
    // The attack: a tenant named to sort first lists the victim's domain.
    const b = await organizationWithSaml(t, "AAA", ["b.test", "A.TEST"]);
    expect(b.saved.status).toBe(409);
    expect(b.saved.body.reason).toBe("sso_domain_taken");
    expect(b.saved.body.details).toContain("a.test");
    expect(b.saved.body.details).not.toContain("Acme");
    expect(b.saved.body.details).not.toContain(a.organizationId);
    // Nothing of the refused change was kept.
    const current = await t.request("GET", "/api/v1/organizations/current", { token: b.adminToken });
    expect(current.body.sso.saml ?? null).toBeNull();
    expect(current.body.sso_domains).toEqual([]);

    // Its own domains are its own; once A lets a.test go, B may take it.
    expect((await saveDomains(t, b.adminToken, ["b.test"])).status).toBe(200);
    expect((await saveDomains(t, a.adminToken, ["a-corp.test"])).status).toBe(200);
    expect((await saveDomains(t, b.adminToken, ["b.test", "a.test"])).status).toBe(200);
  });

  test("with several organizations, discovery uses a domain only once the operator confirmed it", async () => {
    const t = await newApp();
    const a = await organizationWithSaml(t, "Acme", ["a.test"]);
    const b = await organizationWithSaml(t, "AAA", ["b.test"]);
    expect(b.saved.status).toBe(200);
    const mine = await t.request("GET", "/api/v1/organizations/current", { token: b.adminToken });
    expect(mine.body.sso_domains).toEqual([{ domain: "b.test", confirmed: false, discoverable: false }]);
    expect(await discover(t, "member@b.test")).toEqual([]);

    await t.confirmSsoDomain("AAA", "b.test");
    expect((await discover(t, "member@b.test")).map((item) => item.organization_id)).toEqual([
      b.organizationId,
    ]);
    const confirmed = await t.request("GET", "/api/v1/organizations/current", { token: b.adminToken });
    expect(confirmed.body.sso_domains).toEqual([{ domain: "b.test", confirmed: true, discoverable: true }]);

    // Acme's people reach Acme only (when confirmed), never AAA.
    await t.confirmSsoDomain(a.organizationId, "a.test");
    expect((await discover(t, "member@a.test")).map((item) => item.organization_id)).toEqual([
      a.organizationId,
    ]);
    // An operator-confirmed domain stays the organization's even when its settings stop listing it.
    expect((await saveDomains(t, b.adminToken, ["b2.test"])).status).toBe(200);
    const other = await organizationWithSaml(t, "Other", ["b.test"]);
    expect(other.saved.status).toBe(409);
  });

  test("with several organizations, new accounts of a domain are created only once the operator confirmed it", async () => {
    const t = await newApp();
    await organizationWithSaml(t, "Acme", ["a.test"]);
    // Listing a domain nobody claims (gmail.com, say) is allowed, but creates nobody's account there yet.
    const b = await organizationWithSaml(t, "AAA", ["squatted.test"]);
    const refused = await signInThroughIdp(t, b.organizationId, "someone@squatted.test");
    expect(refused.searchParams.get("error")).toBe("sso_domain_not_allowed");
    const users = async () =>
      (await t.request("GET", "/api/v1/users", { token: b.adminToken })).body.data.map(
        (user: { email: string }) => user.email,
      );
    expect(await users()).not.toContain("someone@squatted.test");
    await t.confirmSsoDomain(b.organizationId, "squatted.test");
    const created = await signInThroughIdp(t, b.organizationId, "someone@squatted.test");
    expect(created.searchParams.get("code")).toBeTruthy();
    expect(await users()).toContain("someone@squatted.test");
  });

  test("the operator taking a domain away takes it out of the organization's settings too", async () => {
    const t = await newApp();
    const a = await organizationWithSaml(t, "Acme", ["a.test", "a2.test"]);
    await t.confirmSsoDomain(a.organizationId, "a.test");
    await t.removeSsoDomain(a.organizationId, "a.test");
    const current = await t.request("GET", "/api/v1/organizations/current", { token: a.adminToken });
    expect(current.body.sso.saml.allowed_domains).toEqual(["a2.test"]);
    expect(current.body.sso_domains.map((claim: { domain: string }) => claim.domain)).toEqual(["a2.test"]);
    // Another organization may have it now, and Acme's own next change is not refused for it.
    const b = await organizationWithSaml(t, "Globex", ["a.test"]);
    expect(b.saved.status).toBe(200);
    expect((await saveDomains(t, a.adminToken, ["a2.test", "a3.test"])).status).toBe(200);
  });

  inProcessTest(
    "an installation of one organization needs no confirmation, and keeps its domains when a second arrives",
    async () => {
      const t = await newApp();
      const a = await organizationWithSaml(t, "Acme", ["a.test"]);
      expect((await discover(t, "someone@a.test")).map((item) => item.organization_id)).toEqual([
        a.organizationId,
      ]);
      const mine = await t.request("GET", "/api/v1/organizations/current", { token: a.adminToken });
      // Claimed while nobody else could claim anything: confirmed by the installation itself.
      expect(mine.body.sso_domains).toEqual([{ domain: "a.test", confirmed: true, discoverable: true }]);
      await t.createOrganization("Second tenant");
      expect((await discover(t, "someone@a.test")).map((item) => item.organization_id)).toEqual([
        a.organizationId,
      ]);
      const after = await t.request("GET", "/api/v1/organizations/current", { token: a.adminToken });
      expect(after.body.sso_domains).toEqual([{ domain: "a.test", confirmed: true, discoverable: true }]);
    },
  );

  inProcessTest(
    "a domain an organization listed before claims existed, claimed by another, creates nobody there",
    async () => {
      const t = await newApp();
      await organizationWithSaml(t, "Acme", ["a.test"]);
      const b = await organizationWithSaml(t, "AAA", ["b.test"]);
      // As an older Bulwark let it be stored: B lists A's domain too.
      const row = await firstRow(
        t.deps.db.select().from(organizations).where(eq(organizations.id, b.organizationId)),
      );
      const sso = structuredClone(row?.ssoSettings) as { saml: { allowed_domains: string[] } };
      sso.saml.allowed_domains.push("a.test");
      await withTransaction(
        t.deps.db,
        async (tx) =>
          await tx
            .update(organizations)
            .set({ ssoSettings: sso })
            .where(eq(organizations.id, b.organizationId)),
      );
      const location = await signInThroughIdp(t, b.organizationId, "new.person@a.test");
      expect(location.searchParams.get("error")).toBe("sso_domain_not_allowed");
      const users = await t.request("GET", "/api/v1/users", { token: b.adminToken });
      expect(users.body.data.map((user: { email: string }) => user.email)).not.toContain("new.person@a.test");
    },
  );
});
