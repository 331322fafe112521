import { createHash } from "node:crypto";
import { and, eq, isNull } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { lookUpCertificateHolder } from "../../db/lookups";
import { deviceCertificates } from "../../db/tables";
import { addSeconds, toIso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import type { DomainDeps } from "../deps";
import type { DevicePrincipal } from "../devices/authenticate-device";
import { UnauthenticatedError } from "../errors";
import type { VerifiedCsr } from "./certificate-request";
import { CA_ALGORITHM, type DeviceCa, organizationNameAttribute, randomSerialNumber } from "./device-ca";
import { loadX509 } from "./x509";

/** A device certificate is valid for one year (docs/agent-api.md). */
export const DEVICE_CERTIFICATE_LIFETIME_SECONDS = 365 * 86400;
/** Backdated a little, so that a proxy whose clock runs behind ours does not see a certificate from the future. */
const BACKDATE_SECONDS = 300;

/** A device certificate signed and ready to be stored with `storeDeviceCertificate`. */
export interface SignedDeviceCertificate {
  pem: string;
  serial: string;
  fingerprint: string;
  notBefore: string;
  expiresAt: string;
}

/** The certificate summary GET /devices/:id shows. */
export interface DeviceCertificateView {
  serial: string;
  issued_at: string;
  expires_at: string;
  revoked: boolean;
  revoked_at: string | null;
}

/**
 * Signs a client certificate for a device with its organization's CA: subject CN = device id, O = the
 * organization's name; one year; not a CA; digital signature (and key encipherment for RSA); extended
 * key usage clientAuth; key identifiers linking it to the CA.
 */
export async function signDeviceCertificate(
  ca: DeviceCa,
  request: VerifiedCsr,
  subject: { deviceId: string; organizationName: string },
  now: Date,
): Promise<SignedDeviceCertificate> {
  const x509 = await loadX509();
  const notBefore = addSeconds(now, -BACKDATE_SECONDS);
  const notAfter = addSeconds(now, DEVICE_CERTIFICATE_LIFETIME_SECONDS);
  const usage =
    request.keyType === "rsa"
      ? x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment
      : x509.KeyUsageFlags.digitalSignature;
  const certificate = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerialNumber(),
    subject: [{ CN: [subject.deviceId] }, { O: [organizationNameAttribute(subject.organizationName)] }],
    issuer: ca.certificate.subject,
    notBefore,
    notAfter,
    publicKey: request.publicKey,
    signingKey: ca.privateKey,
    signingAlgorithm: CA_ALGORITHM,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(usage, true),
      new x509.ExtendedKeyUsageExtension([x509.ExtendedKeyUsage.clientAuth]),
      await x509.AuthorityKeyIdentifierExtension.create(ca.certificate.publicKey),
      await x509.SubjectKeyIdentifierExtension.create(request.publicKey),
    ],
  });
  return {
    pem: certificate.toString("pem"),
    serial: certificate.serialNumber.toUpperCase(),
    fingerprint: certificateFingerprint(new Uint8Array(certificate.rawData)),
    notBefore: toIso(notBefore),
    // Certificates carry whole seconds; so does the stored expiry the API reports.
    expiresAt: toIso(new Date(Math.floor(notAfter.getTime() / 1000) * 1000)),
  };
}

/** The SHA-256 of a certificate's DER bytes, in hexadecimal: how a presented certificate is recognised. */
export function certificateFingerprint(der: Uint8Array): string {
  return createHash("sha256").update(der).digest("hex");
}

/** Records an issued certificate as the device's current one. */
export async function storeDeviceCertificate(
  tx: DbOrTx,
  now: Date,
  device: { id: string; organizationId: string },
  certificate: SignedDeviceCertificate,
): Promise<void> {
  await tx.insert(deviceCertificates).values({
    id: newId(),
    deviceId: device.id,
    organizationId: device.organizationId,
    serial: certificate.serial,
    fingerprint: certificate.fingerprint,
    notBefore: certificate.notBefore,
    expiresAt: certificate.expiresAt,
    revokedAt: null,
    revokedReason: null,
    createdAt: toIso(now),
  });
}

/** Revokes every certificate of the device still in force; returns how many. */
export async function revokeDeviceCertificates(
  tx: DbOrTx,
  now: Date,
  deviceId: string,
  reason: "renewed" | "suspended" | "wiped",
): Promise<number> {
  return (
    await tx
      .update(deviceCertificates)
      .set({ revokedAt: toIso(now), revokedReason: reason })
      .where(and(eq(deviceCertificates.deviceId, deviceId), isNull(deviceCertificates.revokedAt)))
      .returning({ id: deviceCertificates.id })
  ).length;
}

/** The device page's view of its newest certificate (the row), or null when it never had one. */
export function deviceCertificateView(
  row: { serial: string; createdAt: string; expiresAt: string; revokedAt: string | null } | undefined,
): DeviceCertificateView | null {
  if (!row) return null;
  return {
    serial: row.serial,
    issued_at: row.createdAt,
    expires_at: row.expiresAt,
    revoked: row.revokedAt !== null,
    revoked_at: row.revokedAt,
  };
}

/**
 * The device a client certificate (DER) authenticates: one this server issued (recognised by its
 * fingerprint, so another CA's certificate, even with a device id as its CN, is unknown), not revoked,
 * within its validity, for a device not wiped. The TLS handshake (ours or a trusted proxy's) has already
 * proven that the client holds the certificate's private key.
 */
export async function authenticateDeviceCertificate(
  deps: DomainDeps,
  der: Uint8Array,
): Promise<DevicePrincipal> {
  const row = await lookUpCertificateHolder(deps.db, certificateFingerprint(der));
  if (!row?.device.id)
    throw new UnauthenticatedError(
      "client_certificate_unknown",
      "invalid client certificate",
      "the certificate was not issued by this server's device CA (or its device was deleted)",
    );
  if (row.certificate.revokedAt)
    throw new UnauthenticatedError(
      "client_certificate_revoked",
      "invalid client certificate",
      "the certificate has been revoked",
    );
  const now = toIso(deps.clock.now());
  if (row.certificate.expiresAt <= now || row.certificate.notBefore > now)
    throw new UnauthenticatedError(
      "client_certificate_expired",
      "invalid client certificate",
      "the certificate is outside its validity period; renew it with the device token",
    );
  if (row.device.status === "wiped")
    throw new UnauthenticatedError("device_wiped", "invalid client certificate", "the device has been wiped");
  return {
    deviceId: row.device.id,
    organizationId: row.device.organizationId,
    credential: { type: "certificate", id: row.certificate.id },
  };
}
