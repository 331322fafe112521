/**
 * Device certificates, proved with openssl: it makes the keys and CSRs, and `openssl verify` must accept
 * what Bulwark issues against ca.pem. Agents then authenticate with the certificate through a trusted
 * proxy's RFC 9440 Client-Cert header.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createDeviceTestApp, createEnrollmentToken, enrollBody, enrollDevice } from "../helpers/devices";
import {
  certificateFields,
  clientCertHeader,
  forgeCertificate,
  type KeyKind,
  makeCsr,
  opensslVerify,
} from "../helpers/pki";
import { inProcessTest, type TestApp } from "../helpers/test-app";

const ENROLL = "/api/v1/devices/enroll";
const CHECKIN = "/api/v1/agent/checkin";
const RENEW = "/api/v1/agent/certificate";
const t = await createDeviceTestApp({ server: { trust_proxy: true } });
afterAll(() => t.close());

async function caPem(app: TestApp, organizationId: string): Promise<string> {
  const response = await app.fetch(`/api/v1/agent/ca.pem?organization_id=${organizationId}`, {});
  expect(response.status).toBe(200);
  expect(response.headers.get("content-type")).toBe("application/x-pem-file");
  return response.text();
}

/** Enrolls a device with a CSR for a fresh key of `kind`. */
async function enrollWithCsr(app: TestApp, adminToken: string, kind: KeyKind = "p256") {
  const { key, csr } = makeCsr(kind, "/CN=whatever-the-agent-says");
  const enrolled = await enrollDevice(app, adminToken, { csr });
  return { ...enrolled, key, certificate: enrolled.device_certificate ?? "" };
}

function checkInWithCertificate(app: TestApp, certificate: string, headers: Record<string, string> = {}) {
  return app.request("POST", CHECKIN, {
    body: {},
    headers: { "client-cert": clientCertHeader(certificate), ...headers },
  });
}

describe("enrollment with a CSR", () => {
  test.each(["p256", "rsa2048"] as const)(
    "%s: a one-year certificate for CN = device id, O = organization that openssl verifies against ca.pem",
    async (kind) => {
      const org = await t.createOrganization("Acme, Inc. <R&D>");
      const enrolled = await enrollWithCsr(t, org.adminToken, kind);
      expect(enrolled.device_certificate).toStartWith("-----BEGIN CERTIFICATE-----");
      const ca = await caPem(t, org.organizationId);
      expect(opensslVerify(ca, enrolled.certificate)).toEqual({ ok: true, output: "cert.pem: OK" });

      const fields = certificateFields(enrolled.certificate);
      // The agent's own subject is ignored: the server decides what the certificate says.
      expect(fields.subject).toBe(`O=Acme\\, Inc. \\<R&D\\>,CN=${enrolled.id}`);
      expect(fields.text).toContain("TLS Web Client Authentication");
      expect(fields.text).toContain("CA:FALSE");
      expect(new Date(enrolled.certificate_expires_at ?? "").getTime()).toBe(fields.notAfter.getTime());
      const lifetimeDays = (fields.notAfter.getTime() - t.now().getTime()) / 86400_000;
      expect(Math.round(lifetimeDays)).toBe(365);

      const device = await t.request("GET", `/api/v1/devices/${enrolled.id}`, { token: org.adminToken });
      expect(device.body.certificate).toEqual({
        serial: fields.serial,
        issued_at: expect.any(String),
        expires_at: enrolled.certificate_expires_at,
        revoked: false,
        revoked_at: null,
      });
    },
  );

  test("without a CSR: no certificate, as before", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken);
    expect(enrolled.device_certificate).toBeUndefined();
    const device = await t.request("GET", `/api/v1/devices/${enrolled.id}`, { token: org.adminToken });
    expect(device.body.certificate).toBeNull();
  });

  test.each([
    ["an RSA key under 2048 bits", () => makeCsr("rsa1024").csr, "RSA key of 1024 bits"],
    ["a P-384 key", () => makeCsr("p384").csr, "secp384r1"],
    ["an Ed25519 key", () => makeCsr("ed25519").csr, "ed25519"],
    ["text that is no CSR", () => "hello", "PEM certificate signing request"],
    [
      "a CSR whose signature does not verify",
      () => tamper(makeCsr("p256", "/CN=aaaaaaaa").csr),
      "does not verify",
    ],
  ])("%s is a 400 on csr, and the enrollment token is not used", async (_, csr, message) => {
    const org = await t.createOrganization();
    const token = await createEnrollmentToken(t, org.adminToken);
    const response = await t.request("POST", ENROLL, { body: enrollBody(token.token, { csr: csr() }) });
    expect(response.status).toBe(400);
    expect(response.body.errors[0].field).toBe("csr");
    expect(response.body.errors[0].message).toContain(message);
    const tokens = await t.request("GET", "/api/v1/enrollment-tokens", { token: org.adminToken });
    expect(tokens.body.data[0].uses).toBe(0);
  });
});

/** A CSR with one byte of its signed subject changed: still PKCS#10, no longer signed by its key. */
function tamper(csr: string): string {
  const body = csr.replace(/-----[^-]+-----/g, "").replace(/\s+/g, "");
  const der = Buffer.from(body, "base64");
  const at = der.indexOf(Buffer.from("aaaaaaaa"));
  der[at] = "b".charCodeAt(0);
  return `-----BEGIN CERTIFICATE REQUEST-----\n${der.toString("base64")}\n-----END CERTIFICATE REQUEST-----\n`;
}

describe("GET /agent/ca.pem", () => {
  test("the caller's organization, or the one named; 400 without either, 404 for an unknown one", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken);
    const named = await caPem(t, org.organizationId);
    const asDevice = await t.fetch("/api/v1/agent/ca.pem", {
      headers: { authorization: `Bearer ${enrolled.device_token}` },
    });
    expect(await asDevice.text()).toBe(named);
    const asAdmin = await t.fetch("/api/v1/agent/ca.pem", {
      headers: { authorization: `Bearer ${org.adminToken}` },
    });
    expect(await asAdmin.text()).toBe(named);
    expect(certificateFields(named).text).toContain("CA:TRUE");
    // Each organization has its own CA.
    expect(await caPem(t, (await t.createOrganization()).organizationId)).not.toBe(named);

    const missing = await t.request("GET", "/api/v1/agent/ca.pem");
    expect(missing.status).toBe(400);
    expect(missing.body.errors[0].field).toBe("organization_id");
    expect(
      (await t.request("GET", `/api/v1/agent/ca.pem?organization_id=${crypto.randomUUID()}`)).status,
    ).toBe(404);
  });
});

describe("agents authenticated by certificate (RFC 9440 Client-Cert from a trusted proxy)", () => {
  test("the certificate stands in for the device token; the token keeps working beside it", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollWithCsr(t, org.adminToken);
    const byCertificate = await checkInWithCertificate(t, enrolled.certificate);
    expect(byCertificate.status).toBe(200);
    expect(byCertificate.body.device_id).toBe(enrolled.id);
    const byToken = await t.request("POST", CHECKIN, { token: enrolled.device_token, body: {} });
    expect(byToken.status).toBe(200);
  });

  test("nginx's URL-encoded PEM ($ssl_client_escaped_cert) is read too", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollWithCsr(t, org.adminToken);
    const response = await t.request("POST", CHECKIN, {
      body: {},
      headers: { "client-cert": encodeURIComponent(enrolled.certificate) },
    });
    expect(response.status).toBe(200);
  });

  test("without server.trust_proxy the header is ignored: anyone could send it", async () => {
    const app = await createDeviceTestApp();
    try {
      const org = await app.createOrganization();
      const enrolled = await enrollWithCsr(app, org.adminToken);
      const response = await checkInWithCertificate(app, enrolled.certificate);
      expect(response.status).toBe(401);
      expect(response.body.reason).toBe("device_token_required");
    } finally {
      await app.close();
    }
  });

  test("a forged header, another CA's certificate for this device, or another organization's: 401", async () => {
    const org = await t.createOrganization("Victim");
    const enrolled = await enrollWithCsr(t, org.adminToken);
    const garbage = await t.request("POST", CHECKIN, {
      body: {},
      headers: { "client-cert": "not a certificate" },
    });
    expect(garbage.status).toBe(401);
    expect(garbage.body.reason).toBe("client_certificate_invalid");

    // A certificate that says all the right things, signed by a CA nobody here made.
    const forged = forgeCertificate(enrolled.id, "Victim");
    expect(certificateFields(forged.certificate).subject).toContain(`CN=${enrolled.id}`);
    const byForgery = await checkInWithCertificate(t, forged.certificate);
    expect(byForgery.status).toBe(401);
    expect(byForgery.body.reason).toBe("client_certificate_unknown");

    // Another organization's device certificate is that device's, and opens nothing of this one.
    const other = await t.createOrganization();
    const theirs = await enrollWithCsr(t, other.adminToken);
    const wipe = await t.request("POST", `/api/v1/devices/${enrolled.id}/wipe`, {
      token: org.adminToken,
      body: { reason: "lost" },
    });
    const foreign = await t.request("POST", `/api/v1/agent/wipes/${wipe.body.wipe_id}/complete`, {
      body: { success: true },
      headers: { "client-cert": clientCertHeader(theirs.certificate) },
    });
    expect(foreign.status).toBe(404);
    expect(opensslVerify(await caPem(t, org.organizationId), theirs.certificate).ok).toBe(false);
  });

  test("suspension revokes the certificate (401); once unsuspended, the device renews with its token", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollWithCsr(t, org.adminToken);
    const device = `/api/v1/devices/${enrolled.id}`;
    await t.request("PUT", `${device}/status`, {
      token: org.adminToken,
      body: { status: "suspended", reason: "x" },
    });
    const revoked = await checkInWithCertificate(t, enrolled.certificate);
    expect(revoked.status).toBe(401);
    expect(revoked.body.reason).toBe("client_certificate_revoked");
    expect((await t.request("GET", device, { token: org.adminToken })).body.certificate).toMatchObject({
      revoked: true,
    });

    const { csr, key: _ } = makeCsr();
    const whileSuspended = await t.request("POST", RENEW, { token: enrolled.device_token, body: { csr } });
    expect(whileSuspended.status).toBe(409);
    expect(whileSuspended.body.reason).toBe("device_suspended");
    await t.request("PUT", `${device}/status`, { token: org.adminToken, body: { status: "online" } });
    const renewed = await t.request("POST", RENEW, { token: enrolled.device_token, body: { csr } });
    expect(renewed.status).toBe(200);
    expect((await checkInWithCertificate(t, renewed.body.device_certificate)).status).toBe(200);
  });

  test("renewal: a new certificate (openssl verifies it), and the old one revoked", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollWithCsr(t, org.adminToken);
    const { csr } = makeCsr("rsa2048");
    // Renewing with the certificate itself works as well as with the token.
    const renewed = await t.request("POST", RENEW, {
      body: { csr },
      headers: { "client-cert": clientCertHeader(enrolled.certificate) },
    });
    expect(renewed.status).toBe(200);
    expect(renewed.body).toMatchObject({ revoked_certificates: 1 });
    const ca = await caPem(t, org.organizationId);
    expect(opensslVerify(ca, renewed.body.device_certificate).ok).toBe(true);
    expect(certificateFields(renewed.body.device_certificate).serial).toBe(renewed.body.serial);

    const old = await checkInWithCertificate(t, enrolled.certificate);
    expect(old.status).toBe(401);
    expect(old.body.reason).toBe("client_certificate_revoked");
    expect((await checkInWithCertificate(t, renewed.body.device_certificate)).status).toBe(200);
    const device = await t.request("GET", `/api/v1/devices/${enrolled.id}`, { token: org.adminToken });
    expect(device.body.certificate).toMatchObject({ serial: renewed.body.serial, revoked: false });

    const bad = await t.request("POST", RENEW, {
      token: enrolled.device_token,
      body: { csr: makeCsr("p384").csr },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.errors[0].field).toBe("csr");
    expect((await t.request("POST", RENEW, { body: { csr } })).status).toBe(401);
  });

  test("a completed wipe revokes the certificate, and deleting the device forgets it", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollWithCsr(t, org.adminToken);
    const device = `/api/v1/devices/${enrolled.id}`;
    const wipe = await t.request("POST", `${device}/wipe`, {
      token: org.adminToken,
      body: { reason: "lost" },
    });
    // Until the wipe is done, the certificate still fetches the command and reports back.
    expect((await checkInWithCertificate(t, enrolled.certificate)).body.commands).toHaveLength(1);
    const done = await t.request("POST", `/api/v1/agent/wipes/${wipe.body.wipe_id}/complete`, {
      body: { success: true },
      headers: { "client-cert": clientCertHeader(enrolled.certificate) },
    });
    expect(done.status).toBe(200);
    const afterWipe = await checkInWithCertificate(t, enrolled.certificate);
    expect(afterWipe.status).toBe(401);
    expect(afterWipe.body.reason).toBe("client_certificate_revoked");
    expect((await t.request("DELETE", device, { token: org.adminToken })).status).toBe(204);
    const afterDelete = await checkInWithCertificate(t, enrolled.certificate);
    expect(afterDelete.status).toBe(401);
    expect(afterDelete.body.reason).toBe("client_certificate_unknown");
  });

  inProcessTest("an expired certificate is a 401 that says to renew", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollWithCsr(t, org.adminToken);
    t.clock.advanceSeconds(366 * 86400);
    const expired = await checkInWithCertificate(t, enrolled.certificate);
    expect(expired.status).toBe(401);
    expect(expired.body.reason).toBe("client_certificate_expired");
    expect(expired.body.details).toContain("renew");
  });
});
