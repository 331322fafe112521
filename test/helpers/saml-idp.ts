import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import * as validator from "@authenio/samlify-xmllint-wasm";
import * as samlify from "samlify";

// samlify refuses to parse anything until a schema validator is set: xmllint (as WebAssembly) checks
// every message against the SAML 2.0 XSDs, so Bulwark's AuthnRequest is proved schema-valid too.
samlify.setSchemaValidator(validator);

/** A signing key and self-signed certificate made by openssl (RSA 2048, SHA-256). */
export function makeSigningCertificate(commonName: string): { key: string; certificate: string } {
  const folder = mkdtempSync(join(tmpdir(), "bulwark-saml-"));
  try {
    const run = Bun.spawnSync(
      [
        "openssl",
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-sha256",
        "-days",
        "2",
        "-nodes",
        "-subj",
        `/CN=${commonName}`,
        "-keyout",
        join(folder, "key.pem"),
        "-out",
        join(folder, "cert.pem"),
      ],
      { stderr: "pipe" },
    );
    if (run.exitCode !== 0) throw new Error(`openssl failed: ${run.stderr.toString()}`);
    return {
      key: readFileSync(join(folder, "key.pem"), "utf8"),
      certificate: readFileSync(join(folder, "cert.pem"), "utf8"),
    };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

const escapeXml = (text: string) =>
  text.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");

/** What the IdP says about the person, and anything of the response a test wants otherwise. */
export interface Assertion {
  nameId: string;
  email?: string;
  name?: string;
  /** Template values to replace (Destination, SubjectRecipient, InResponseTo, Audience, ...). */
  overrides?: Record<string, string>;
}

/**
 * A SAML 2.0 identity provider made with samlify (a library nobody here wrote), built from Bulwark's SP
 * metadata. It reads Bulwark's AuthnRequest from the redirect URL and answers with a Response signed as a
 * whole and with a signed assertion (the SP's wantMessageSigned), as the HTTP-POST binding posts it.
 */
export function createSamlIdp(options: {
  entityId: string;
  ssoUrl: string;
  signing?: { key: string; certificate: string };
}) {
  const signing = options.signing ?? makeSigningCertificate("test-idp");
  const idp = samlify.IdentityProvider({
    entityID: options.entityId,
    privateKey: signing.key,
    signingCert: signing.certificate,
    isAssertionEncrypted: false,
    wantAuthnRequestsSigned: false,
    nameIDFormat: ["urn:oasis:names:tc:SAML:2.0:nameid-format:persistent"],
    singleSignOnService: [
      { Binding: samlify.Constants.namespace.binding.redirect, Location: options.ssoUrl },
    ],
  });

  function serviceProvider(spMetadata: string) {
    return samlify.ServiceProvider({ metadata: spMetadata, wantMessageSigned: true });
  }

  /** Reads Bulwark's redirect to the IdP: the AuthnRequest (checked against the XSDs) and RelayState. */
  async function readLoginRequest(spMetadata: string, loginUrl: string) {
    const url = new URL(loginUrl);
    const query = Object.fromEntries(url.searchParams);
    const parsed = await idp.parseLoginRequest(serviceProvider(spMetadata), "redirect", {
      query,
      octetString: "",
    });
    return { parsed, relayState: query.RelayState ?? "" };
  }

  /** The signed, base64 SAMLResponse answering `loginUrl`'s request (or none, for an unsolicited one). */
  async function respond(spMetadata: string, loginUrl: string | null, assertion: Assertion): Promise<string> {
    const sp = serviceProvider(spMetadata);
    const request = loginUrl ? (await readLoginRequest(spMetadata, loginUrl)).parsed : null;
    const now = new Date();
    const later = new Date(now.getTime() + 5 * 60 * 1000);
    // The ACS the SP metadata names for HTTP-POST (read from the XML: samlify's lookup by binding misses it).
    const acs =
      spMetadata.match(
        /<(?:md:)?AssertionConsumerService[^>]*Binding="urn:oasis:names:tc:SAML:2.0:bindings:HTTP-POST"[^>]*Location="([^"]+)"/,
      )?.[1] ?? "";
    const attributes = [
      ["email", assertion.email],
      ["displayName", assertion.name],
    ]
      .filter(([, value]) => value !== undefined)
      .map(
        ([name, value]) =>
          `<saml:Attribute Name="${name}" NameFormat="urn:oasis:names:tc:SAML:2.0:attrname-format:basic"><saml:AttributeValue xsi:type="xs:string">${escapeXml(value as string)}</saml:AttributeValue></saml:Attribute>`,
      )
      .join("");
    const requestInfo = (request ?? {}) as Parameters<typeof idp.createLoginResponse>[1];
    const response = await idp.createLoginResponse(sp, requestInfo, "post", {}, (template: string) => {
      const id = `_${crypto.randomUUID()}`;
      const values: Record<string, string> = {
        ID: id,
        AssertionID: `_${crypto.randomUUID()}`,
        Destination: acs,
        Audience: String(sp.entityMeta.getEntityID()),
        SubjectRecipient: acs,
        Issuer: options.entityId,
        IssueInstant: now.toISOString(),
        StatusCode: samlify.Constants.StatusCode.Success,
        ConditionsNotBefore: now.toISOString(),
        ConditionsNotOnOrAfter: later.toISOString(),
        SubjectConfirmationDataNotOnOrAfter: later.toISOString(),
        NameIDFormat: "urn:oasis:names:tc:SAML:2.0:nameid-format:persistent",
        NameID: assertion.nameId,
        InResponseTo: String(request?.extract?.request?.id ?? ""),
        ...assertion.overrides,
      };
      let context = template
        .replace(
          "{AuthnStatement}",
          `<saml:AuthnStatement AuthnInstant="${now.toISOString()}" SessionIndex="${id}"><saml:AuthnContext><saml:AuthnContextClassRef>urn:oasis:names:tc:SAML:2.0:ac:classes:PasswordProtectedTransport</saml:AuthnContextClassRef></saml:AuthnContext></saml:AuthnStatement>`,
        )
        .replace(
          "{AttributeStatement}",
          attributes ? `<saml:AttributeStatement>${attributes}</saml:AttributeStatement>` : "",
        );
      // An unsolicited response has no InResponseTo at all.
      if (!values.InResponseTo) context = context.replaceAll(' InResponseTo="{InResponseTo}"', "");
      return { id, context: samlify.SamlLib.replaceTagsByValue(context, values) };
    });
    return response.context;
  }

  return { certificate: signing.certificate, readLoginRequest, respond };
}
