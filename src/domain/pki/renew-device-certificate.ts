import { eq } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { devices, organizations } from "../../db/tables";
import { recordAudit } from "../audit/record-audit";
import type { Actor, DomainDeps } from "../deps";
import { appendDeviceLog } from "../devices/append-device-log";
import type { DevicePrincipal } from "../devices/authenticate-device";
import { ConflictError, UnauthenticatedError } from "../errors";
import { verifyCertificateSigningRequest } from "./certificate-request";
import { deviceCa } from "./device-ca";
import {
  revokeDeviceCertificates,
  signDeviceCertificate,
  storeDeviceCertificate,
} from "./device-certificates";

/** POST /agent/certificate's answer. */
export interface RenewedCertificate {
  device_certificate: string;
  certificate_expires_at: string;
  serial: string;
  revoked_certificates: number;
}

/**
 * Issues the calling device a new certificate for the key in its CSR (a new key or the same one) and
 * revokes every earlier certificate in the same transaction, so that two are never valid at once. A
 * suspended device gets none (409): suspension revoked its certificate and it renews once unsuspended.
 */
export async function renewDeviceCertificate(
  deps: DomainDeps,
  caller: DevicePrincipal,
  actor: Actor,
  csr: string,
): Promise<RenewedCertificate> {
  const request = await verifyCertificateSigningRequest(csr);
  const organization = await firstRow(
    deps.db
      .select({ name: organizations.name })
      .from(organizations)
      .where(eq(organizations.id, caller.organizationId)),
  );
  const ca = await deviceCa(deps, caller.organizationId);
  const now = deps.clock.now();
  const signed = await signDeviceCertificate(
    ca,
    request,
    { deviceId: caller.deviceId, organizationName: organization?.name ?? "" },
    now,
  );
  return await withTransaction(deps.db, async (tx) => {
    const device = await firstRow(
      tx
        .select({ id: devices.id, organizationId: devices.organizationId, status: devices.status })
        .from(devices)
        .where(eq(devices.id, caller.deviceId)),
    );
    if (!device || device.status === "wiped")
      throw new UnauthenticatedError(
        "device_wiped",
        "invalid device credential",
        "the device has been wiped",
      );
    if (device.status === "suspended")
      throw new ConflictError(
        "device_suspended",
        "device is suspended",
        "a suspended device gets no certificate; renew once an administrator has unsuspended it",
      );
    const revoked = await revokeDeviceCertificates(tx, now, device.id, "renewed");
    await storeDeviceCertificate(tx, now, device, signed);
    const details = { serial: signed.serial, expires_at: signed.expiresAt, revoked_certificates: revoked };
    await appendDeviceLog(tx, now, device.id, "certificate.renewed", details);
    await recordAudit(tx, now, actor, {
      action: "device.certificate_renew",
      targetType: "device",
      targetId: device.id,
      details,
    });
    return {
      device_certificate: signed.pem,
      certificate_expires_at: signed.expiresAt,
      serial: signed.serial,
      revoked_certificates: revoked,
    };
  });
}
