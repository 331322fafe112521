/**
 * SAML 2.0 single sign-on through Bulwark's HTTP API against a real IdP made with samlify from Bulwark's
 * own SP metadata: Bulwark's AuthnRequest is read (and checked against the SAML XSDs) by samlify, and its
 * signed Responses are what Bulwark's ACS judges.
 */
import { describe, expect, test } from "bun:test";
import { documentedLocationParameters } from "../helpers/documented-redirects";
import { createSamlIdp, makeSigningCertificate } from "../helpers/saml-idp";
import { confirmSsoDomainsOf, freshTestApps, type TestApp } from "../helpers/test-app";

const IDP_ENTITY = "https://idp.corp.test/metadata";
const IDP_SSO = "https://idp.corp.test/sso";
const CALLBACK = "https://console.corp.test/sso/saml-callback";
const SAML = "/api/v1/auth/sso/saml";

const newApp = freshTestApps({ rate_limit: { unauthenticated_per_minute: 10_000 } });
const idp = createSamlIdp({ entityId: IDP_ENTITY, ssoUrl: IDP_SSO });

/** An enterprise organization whose SAML connection trusts `idp`. */
async function organizationWithSaml(t: TestApp, saml: Record<string, unknown> = {}) {
  const org = await t.createOrganization();
  await t.setPlan(org.organizationId, "enterprise");
  const response = await t.request("PATCH", "/api/v1/organizations/current", {
    token: org.adminToken,
    body: {
      sso: {
        saml: {
          enabled: true,
          idp_entity_id: IDP_ENTITY,
          idp_sso_url: IDP_SSO,
          idp_certificate: idp.certificate,
          redirect_uris: [CALLBACK],
          allowed_domains: ["corp.test"],
          ...saml,
        },
      },
    },
  });
  expect(response.status).toBe(200);
  await confirmSsoDomainsOf(t, org);
  const metadata = await t.fetch(`${SAML}/metadata?organization_id=${org.organizationId}`, {});
  expect(metadata.status).toBe(200);
  return { ...org, metadata: await metadata.text() };
}

function randomState() {
  return crypto.randomUUID().replaceAll("-", "");
}

async function startLogin(t: TestApp, organizationId: string, state = randomState()) {
  const query = new URLSearchParams({ organization_id: organizationId, redirect_uri: CALLBACK, state });
  const response = await t.fetch(`${SAML}/login?${query}`, { redirect: "manual" });
  return {
    status: response.status,
    location: response.headers.get("location") ?? "",
    state,
    body: await response.text(),
  };
}

/** What the IdP's auto-submitting form does: POST the response to the ACS. */
async function postToAcs(t: TestApp, samlResponse: string, relayState = "") {
  const response = await t.fetch(`${SAML}/acs`, {
    method: "POST",
    redirect: "manual",
    headers: { "content-type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ SAMLResponse: samlResponse, RelayState: relayState }).toString(),
  });
  const text = await response.text();
  return {
    status: response.status,
    location: response.headers.get("location") ? new URL(response.headers.get("location") ?? "") : null,
    body: text ? JSON.parse(text) : null,
  };
}

/** One SP-initiated round: start the login, let the IdP answer it as `assertion`, post that to the ACS. */
async function signInThroughIdp(
  t: TestApp,
  org: { organizationId: string; metadata: string },
  assertion: Parameters<typeof idp.respond>[2],
) {
  const login = await startLogin(t, org.organizationId);
  return postToAcs(t, await idp.respond(org.metadata, login.location, assertion));
}

describe("the plan gate", () => {
  test("every SAML endpoint and enabling SAML are 403 on the standard plan", async () => {
    const t = await newApp();
    const org = await t.createOrganization();
    const enable = await t.request("PATCH", "/api/v1/organizations/current", {
      token: org.adminToken,
      body: {
        sso: {
          saml: {
            enabled: true,
            idp_entity_id: IDP_ENTITY,
            idp_sso_url: IDP_SSO,
            idp_certificate: idp.certificate,
            redirect_uris: [CALLBACK],
          },
        },
      },
    });
    expect(enable.status).toBe(403);
    expect(enable.body).toMatchObject({
      reason: "saml_requires_enterprise",
      message: "SAML single sign-on needs the enterprise plan",
    });
    const metadata = await t.request("GET", `${SAML}/metadata?organization_id=${org.organizationId}`);
    expect(metadata.status).toBe(403);
    expect(metadata.body.message).toBe("SAML single sign-on needs the enterprise plan");
    const login = await startLogin(t, org.organizationId);
    expect(login.status).toBe(403);
    expect(JSON.parse(login.body).reason).toBe("saml_requires_enterprise");
    // The organization's own admin cannot lift it.
    const plan = await t.request("PATCH", "/api/v1/organizations/current", {
      token: org.adminToken,
      body: { plan: "enterprise" },
    });
    expect(plan.status).toBe(403);
    expect(plan.body.reason).toBe("plan_set_by_operator");
  });
});

describe("connection and metadata", () => {
  test("the SP metadata names the documented entityID and ACS; a certificate that does not parse is a 400", async () => {
    const t = await newApp();
    const org = await organizationWithSaml(t);
    const base = t.config.server.base_url.replace(/\/$/, "");
    expect(org.metadata).toContain(
      `entityID="${base}/api/v1/auth/sso/saml/metadata?organization_id=${org.organizationId}"`,
    );
    expect(org.metadata).toContain(`Location="${base}/api/v1/auth/sso/saml/acs"`);
    expect(org.metadata).toContain('WantAssertionsSigned="true"');
    const settings = await t.request("GET", "/api/v1/organizations/current", { token: org.adminToken });
    expect(settings.body.sso.saml).toMatchObject({
      enabled: true,
      acs_url: `${base}/api/v1/auth/sso/saml/acs`,
      sp_metadata_url: `${base}/api/v1/auth/sso/saml/metadata?organization_id=${org.organizationId}`,
    });
    const broken = await t.request("PATCH", "/api/v1/organizations/current", {
      token: org.adminToken,
      body: {
        sso: {
          saml: {
            idp_certificate: "-----BEGIN CERTIFICATE-----\nnot a certificate\n-----END CERTIFICATE-----",
          },
        },
      },
    });
    expect(broken.status).toBe(400);
    expect(broken.body.errors[0].field).toBe("sso.saml.idp_certificate");
    // The base64 body alone, as IdP metadata holds it, is accepted and stored as PEM.
    const bare = idp.certificate.replace(/-----[A-Z ]+-----/g, "").replace(/\s+/g, "");
    const saved = await t.request("PATCH", "/api/v1/organizations/current", {
      token: org.adminToken,
      body: { sso: { saml: { idp_certificate: bare } } },
    });
    expect(saved.status).toBe(200);
    expect(saved.body.sso.saml.idp_certificate).toStartWith("-----BEGIN CERTIFICATE-----\n");
  });
});

describe("sign-in", () => {
  test("SP-initiated: AuthnRequest to the IdP, signed response to the ACS, one-time code to tokens", async () => {
    const t = await newApp();
    const org = await organizationWithSaml(t);
    const login = await startLogin(t, org.organizationId);
    expect(login.status).toBe(302);
    expect(login.location).toStartWith(`${IDP_SSO}?SAMLRequest=`);
    // The OpenAPI document names the parameters of both redirects.
    const document = (await t.request("GET", "/api/v1/openapi.json")).body;
    expect([...new URL(login.location).searchParams.keys()].sort()).toEqual(
      documentedLocationParameters(document, "get", `${SAML}/login`, 302).sort(),
    );
    const request = await idp.readLoginRequest(org.metadata, login.location);
    expect(request.relayState).toBe(login.state);
    const samlResponse = await idp.respond(org.metadata, login.location, {
      nameId: "persistent-id-dana",
      email: "Dana@corp.test",
      name: "Dana Example",
    });
    const acs = await postToAcs(t, samlResponse, request.relayState);
    expect(acs.status).toBe(303);
    expect(`${acs.location?.origin}${acs.location?.pathname}`).toBe(CALLBACK);
    expect(acs.location?.searchParams.get("state")).toBe(login.state);
    expect(documentedLocationParameters(document, "post", `${SAML}/acs`, 303)).toEqual(
      expect.arrayContaining([...(acs.location?.searchParams.keys() ?? [])]),
    );
    const code = acs.location?.searchParams.get("code") ?? "";
    expect(code).not.toBe("");

    const tokens = await t.request("POST", `${SAML}/token`, { body: { code } });
    expect(tokens.status).toBe(200);
    expect(Object.keys(tokens.body).sort()).toEqual([
      "expires_in",
      "refresh_token",
      "token",
      "token_type",
      "user",
    ]);
    expect(tokens.body.user).toMatchObject({
      email: "dana@corp.test",
      name: "Dana Example",
      role: "member",
      organization_id: org.organizationId,
    });
    expect((await t.request("GET", "/api/v1/users/me", { token: tokens.body.token })).status).toBe(200);
    const again = await t.request("POST", `${SAML}/token`, { body: { code } });
    expect(again.status).toBe(401);
    expect(again.body.reason).toBe("sso_code_invalid");

    const audit = await t.request("GET", "/api/v1/audit-logs?action=auth.login", { token: org.adminToken });
    expect(audit.body.data[0].details).toMatchObject({ method: "sso", provider: "saml" });
  });

  test("a replayed response is refused", async () => {
    const t = await newApp();
    const org = await organizationWithSaml(t);
    const login = await startLogin(t, org.organizationId);
    const samlResponse = await idp.respond(org.metadata, login.location, {
      nameId: "erin",
      email: "erin@corp.test",
    });
    expect((await postToAcs(t, samlResponse)).location?.searchParams.get("code")).toBeTruthy();
    const replayed = await postToAcs(t, samlResponse);
    expect(replayed.status).toBe(303);
    expect(replayed.location?.searchParams.get("code")).toBeNull();
    expect(replayed.location?.searchParams.get("error")).toBe("sso_response_replayed");
    expect(replayed.location?.searchParams.get("state")).toBe(login.state);
  });

  test("a response signed by another certificate is refused", async () => {
    const t = await newApp();
    const org = await organizationWithSaml(t);
    const impostor = createSamlIdp({
      entityId: IDP_ENTITY,
      ssoUrl: IDP_SSO,
      signing: makeSigningCertificate("impostor"),
    });
    const login = await startLogin(t, org.organizationId);
    const forged = await impostor.respond(org.metadata, login.location, {
      nameId: "frank",
      email: "frank@corp.test",
    });
    const acs = await postToAcs(t, forged);
    expect(acs.location?.searchParams.get("error")).toBe("sso_response_invalid");
    expect(acs.location?.searchParams.get("error_description")).toContain("signature");
    // The refusal's parameters are the ones the OpenAPI document names too.
    const document = (await t.request("GET", "/api/v1/openapi.json")).body;
    expect(documentedLocationParameters(document, "post", `${SAML}/acs`, 303)).toEqual(
      expect.arrayContaining([...(acs.location?.searchParams.keys() ?? [])]),
    );
  });

  test("a response changed after signing is refused", async () => {
    const t = await newApp();
    const org = await organizationWithSaml(t);
    const login = await startLogin(t, org.organizationId);
    const signed = await idp.respond(org.metadata, login.location, {
      nameId: "gina",
      email: "gina@corp.test",
    });
    const xml = Buffer.from(signed, "base64").toString("utf8");
    expect(xml).toContain("gina@corp.test");
    const tampered = Buffer.from(xml.replaceAll("gina@corp.test", "admin@corp.test")).toString("base64");
    const acs = await postToAcs(t, tampered);
    expect(acs.location?.searchParams.get("error")).toBe("sso_response_invalid");
    expect(acs.location?.searchParams.get("code")).toBeNull();
  });

  test("an unsolicited (IdP-initiated) response is refused", async () => {
    const t = await newApp();
    const org = await organizationWithSaml(t);
    const unsolicited = await idp.respond(org.metadata, null, { nameId: "henry", email: "henry@corp.test" });
    const acs = await postToAcs(t, unsolicited);
    expect(acs.status).toBe(401);
    expect(acs.location).toBeNull();
    expect(acs.body.reason).toBe("sso_response_unsolicited");
  });

  test("a response addressed to another Destination, or an assertion for another Recipient, is refused", async () => {
    const t = await newApp();
    const org = await organizationWithSaml(t);
    const destination = await signInThroughIdp(t, org, {
      nameId: "ivan",
      email: "ivan@corp.test",
      overrides: { Destination: "https://other-sp.example/acs" },
    });
    expect(destination.location?.searchParams.get("error")).toBe("sso_response_invalid");
    expect(destination.location?.searchParams.get("error_description")).toStartWith("Destination:");

    const recipient = await signInThroughIdp(t, org, {
      nameId: "ivan",
      email: "ivan@corp.test",
      overrides: { SubjectRecipient: "https://other-sp.example/acs" },
    });
    expect(recipient.location?.searchParams.get("error")).toBe("sso_response_invalid");
    expect(recipient.location?.searchParams.get("error_description")).toStartWith("Recipient:");
  });

  test("a response from another Issuer, though signed with the trusted key, is refused", async () => {
    const t = await newApp();
    const org = await organizationWithSaml(t);
    const acs = await signInThroughIdp(t, org, {
      nameId: "judy",
      email: "judy@corp.test",
      overrides: { Issuer: "https://evil-idp.example" },
    });
    expect(acs.location?.searchParams.get("error")).toBe("sso_response_invalid");
    expect(acs.location?.searchParams.get("error_description")).toStartWith("Issuer:");
  });

  test("a code is worthless once SAML is turned off", async () => {
    const t = await newApp();
    const org = await organizationWithSaml(t);
    const signedIn = await signInThroughIdp(t, org, { nameId: "kim", email: "kim@corp.test" });
    const code = signedIn.location?.searchParams.get("code");
    const off = await t.request("PATCH", "/api/v1/organizations/current", {
      token: org.adminToken,
      body: { sso: { saml: { enabled: false } } },
    });
    expect(off.status).toBe(200);
    const exchanged = await t.request("POST", `${SAML}/token`, { body: { code } });
    expect(exchanged.status).toBe(400);
    expect(exchanged.body.reason).toBe("sso_connection_unknown");
  });

  test("an email outside allowed_domains creates nobody, and the client hears why", async () => {
    const t = await newApp();
    const org = await organizationWithSaml(t);
    const acs = await signInThroughIdp(t, org, { nameId: "x", email: "x@elsewhere.test" });
    expect(acs.location?.searchParams.get("error")).toBe("sso_domain_not_allowed");
  });

  test("the login refuses a redirect_uri the connection does not list", async () => {
    const t = await newApp();
    const org = await organizationWithSaml(t);
    const query = new URLSearchParams({
      organization_id: org.organizationId,
      redirect_uri: "https://attacker.example/steal",
      state: randomState(),
    });
    const response = await t.fetch(`${SAML}/login?${query}`, { redirect: "manual" });
    expect(response.status).toBe(400);
    expect(response.headers.get("location")).toBeNull();
  });
});
