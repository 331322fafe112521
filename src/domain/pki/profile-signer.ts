/**
 * Who signs a phone's configuration profile: a certificate the organization's device CA issues for that
 * one signature, with a key made for it and dropped after (nothing more to keep or leak). A phone shows
 * the profile as "Verified" when it trusts the device CA (`GET /api/v1/agent/ca.pem`); otherwise it
 * shows the signer's name marked "Not Verified" and still installs it (docs/phones.md).
 */
import { addSeconds } from "../../lib/clock";
import type { DomainDeps } from "../deps";
import { CA_ALGORITHM, deviceCa, organizationNameAttribute, randomSerialNumber } from "./device-ca";
import type { CmsSigner } from "./sign-cms";
import { loadX509 } from "./x509";

/** A profile is installed within days of being signed; the certificate outlives that comfortably. */
const SIGNER_LIFETIME_SECONDS = 365 * 86400;

export async function profileSigner(
  deps: DomainDeps,
  organization: { id: string; name: string },
  now: Date,
): Promise<CmsSigner> {
  const x509 = await loadX509();
  const ca = await deviceCa(deps, organization.id);
  const keys = await crypto.subtle.generateKey(CA_ALGORITHM, false, ["sign", "verify"]);
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerialNumber(),
    subject: [
      { CN: ["Bulwark configuration profiles"] },
      { O: [organizationNameAttribute(organization.name)] },
    ],
    issuer: ca.certificate.subject,
    notBefore: addSeconds(now, -300),
    notAfter: addSeconds(now, SIGNER_LIFETIME_SECONDS),
    publicKey: keys.publicKey,
    signingKey: ca.privateKey,
    signingAlgorithm: CA_ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      await x509.AuthorityKeyIdentifierExtension.create(ca.certificate.publicKey),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certificate, privateKey: keys.privateKey, chain: [ca.certificate] };
}
