import { and, eq, ne } from "drizzle-orm";
import { type DbOrTx, withTransaction } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { devices, deviceTokens } from "../../db/tables";
import { addSeconds, toIso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import { formatIpv4 } from "../../lib/ipv4";
import { generateSecret, hashSecret } from "../../lib/secrets";
import { generateWireGuardKeyPair } from "../../lib/wireguard";
import { recordAudit } from "../audit/record-audit";
import type { DomainDeps } from "../deps";
import { ConflictError, ValidationError } from "../errors";
import { recordEvent } from "../events/record-event";
import { verifyCertificateSigningRequest } from "../pki/certificate-request";
import { deviceCa } from "../pki/device-ca";
import {
  type SignedDeviceCertificate,
  signDeviceCertificate,
  storeDeviceCertificate,
} from "../pki/device-certificates";
import { resolveEffectivePolicy } from "../policies/effective-policy";
import { findPolicyId } from "../policies/find-policy-id";
import { findLiveUserId } from "../users/find-live-user-id";
import { type DeviceVpnConfig, devicePeerSettings, deviceVpnConfig } from "../vpn/device-vpn-config";
import { organizationAddressBlock, organizationVpnSubnet } from "../vpn/organization-subnets";
import { allocateVpnAddress } from "./allocate-vpn-address";
import { appendDeviceLog } from "./append-device-log";
import { auditEnrollmentRefusal, enrollmentRefusalReason } from "./audit-enrollment-refusal";
import { DEVICE_TOKEN_PREFIX } from "./authenticate-device";
import { describePublicKeyProblem } from "./check-public-key";
import { consumeEnrollmentToken, enrollmentTokenOrganization } from "./consume-enrollment-token";
import { evaluateCompliance, hasReportedState } from "./evaluate-compliance";
import { insertDevice } from "./insert-device";
import type { Platform } from "./platform-versions";

/** Device tokens live as long as device certificates: one year. */
export const DEVICE_TOKEN_LIFETIME_SECONDS = 365 * 86400;

/** What an agent sends to enroll. */
export interface EnrollDeviceInput {
  enrollmentToken: string;
  deviceName: string;
  platform: Platform;
  agentVersion: string;
  hardwareId: string;
  osVersion?: string;
  /** The device's own WireGuard public key; when absent, a key pair is generated for it. */
  publicKey?: string;
  /** A PKCS#10 request (PEM): the device then also gets a client certificate. */
  csr?: string;
  ip: string | null;
}

/** The enrollment result (`EnrollmentResult`) plus the agent's credential. */
export interface EnrollmentResult {
  id: string;
  device_name: string;
  platform: Platform;
  status: "online";
  enrolled_at: string;
  vpn_config: DeviceVpnConfig;
  policy: { id: string; name: string; version: number };
  device_token: string;
  device_token_expires_at: string;
  /** Only when the enrollment carried a CSR. */
  device_certificate?: string;
  certificate_expires_at?: string;
}

/** The device not wiped that holds a WireGuard public key: one lookup in devices_vpn_public_key_unique. */
export function selectPublicKeyHolder(db: DbOrTx, publicKey: string) {
  return db
    .select({ id: devices.id })
    .from(devices)
    .where(and(eq(devices.vpnPublicKey, publicKey), ne(devices.status, "wiped")));
}

/**
 * Enrolls a device with an enrollment token: uses the token, refuses a hardware id already enrolled
 * (and not wiped) in the organization and a public key held by any device not wiped (409), allocates a
 * VPN address from the organization's subnet, assigns the token's policy (else the default) and issues the device token, all in one
 * transaction. A low-order public key is refused (400). The private key is returned, not kept. With a
 * CSR, the certificate is signed before the transaction (signing is asynchronous) for the device id
 * chosen in advance, and stored in it; a refused enrollment leaves it unsigned or unstored. A refusal
 * (the token's state, a hardware id or key taken, no address left) is audited after the rollback.
 */
export async function enrollDevice(deps: DomainDeps, input: EnrollDeviceInput): Promise<EnrollmentResult> {
  const keyProblem = input.publicKey === undefined ? undefined : describePublicKeyProblem(input.publicKey);
  if (keyProblem !== undefined) {
    throw new ValidationError("invalid request body", [
      { field: "public_key", message: keyProblem, received: input.publicKey },
    ]);
  }
  const vpnKeys: { publicKey: string; privateKey?: string } =
    input.publicKey === undefined ? generateWireGuardKeyPair() : { publicKey: input.publicKey };
  const deviceToken = generateSecret(32, DEVICE_TOKEN_PREFIX);
  const now = deps.clock.now();
  const timestamp = toIso(now);
  const tokenExpiresAt = toIso(addSeconds(now, DEVICE_TOKEN_LIFETIME_SECONDS));
  const deviceId = newId();
  const certificate =
    input.csr === undefined ? undefined : await signEnrollmentCertificate(deps, input, deviceId, now);

  // The device holding the hardware id, for the refusal's audit entry.
  let hardwareIdHolder: string | undefined;
  const enrollment = withTransaction<EnrollmentResult>(
    deps.db,
    async (tx) => {
      const token = await consumeEnrollmentToken(tx, now, input.enrollmentToken);
      const organizationId = token.organizationId;
      if (certificate && certificate.organizationId !== organizationId)
        throw new Error("the enrollment token changed organization while the certificate was signed");
      const enrolled = await firstRow(
        tx
          .select({ id: devices.id })
          .from(devices)
          .where(
            and(
              eq(devices.organizationId, organizationId),
              eq(devices.hardwareId, input.hardwareId),
              ne(devices.status, "wiped"),
            ),
          ),
      );
      if (enrolled) {
        hardwareIdHolder = enrolled.id;
        throw new ConflictError(
          "hardware_id_enrolled",
          "a device with this hardware_id is already enrolled",
          `device ${enrolled.id} holds it; an administrator must first retire it (the console, or POST /api/v1/devices/${enrolled.id}/retire), or wipe and delete it`,
        );
      }
      // Two peers with one key would take each other's tunnel; the key is free again once its device is wiped.
      const keyHolder = await firstRow(selectPublicKeyHolder(tx, vpnKeys.publicKey));
      if (keyHolder) {
        throw new ConflictError(
          "public_key_taken",
          "public key already in use",
          "another device holds this WireGuard public key; generate a new key pair for this device",
        );
      }
      // The token's user or policy may have been deleted since it was issued; the device then has none.
      const userId = token.userId ? ((await findLiveUserId(tx, organizationId, token.userId)) ?? null) : null;
      const policyId = token.policyId
        ? ((await findPolicyId(tx, organizationId, token.policyId)) ?? null)
        : null;
      const policy = await resolveEffectivePolicy(deps.db, organizationId, policyId);
      const compliance = evaluateCompliance({
        platform: input.platform,
        osVersion: input.osVersion,
        policy: policy.policyData,
        minimums: deps.config.devices.min_os_versions,
      });
      const isEvaluated = hasReportedState({ osVersion: input.osVersion });
      const organizationSubnet = await organizationVpnSubnet(tx, organizationId);
      const block = organizationAddressBlock(deps.config.vpn, organizationSubnet);
      const address = await allocateVpnAddress(tx, block.range, block.subnet);
      const device = await insertDevice(
        tx,
        {
          id: deviceId,
          organizationId,
          userId,
          deviceName: input.deviceName,
          platform: input.platform,
          agentVersion: input.agentVersion,
          osVersion: input.osVersion ?? null,
          hardwareId: input.hardwareId,
          status: "online",
          policyId,
          vpnAddress: address,
          vpnPublicKey: vpnKeys.publicKey,
          complianceStatus: compliance.status,
          complianceViolations: compliance.violations,
          complianceMissing: compliance.missing,
          complianceCheckedAt: isEvaluated ? timestamp : null,
        },
        timestamp,
      );
      await tx.insert(deviceTokens).values({
        id: newId(),
        deviceId: device.id,
        tokenHash: hashSecret(deviceToken),
        expiresAt: tokenExpiresAt,
        revokedAt: null,
        createdAt: timestamp,
      });
      if (certificate) await storeDeviceCertificate(tx, now, device, certificate.signed);
      const details = {
        user_id: userId,
        policy_id: policy.id,
        hardware_id: device.hardwareId,
        vpn_ip: formatIpv4(address),
        enrollment_token_id: token.id,
        ...(certificate ? { certificate_serial: certificate.signed.serial } : {}),
      };
      await appendDeviceLog(tx, now, device.id, "device.enrolled", details);
      await recordEvent(tx, now, organizationId, "device.enrolled", {
        device_id: device.id,
        device_name: device.deviceName,
        platform: device.platform,
        user_id: userId,
        policy_id: policy.id,
      });
      await recordAudit(
        tx,
        now,
        { type: "device", id: device.id, label: device.deviceName, organizationId, ip: input.ip },
        { action: "device.enroll", targetType: "device", targetId: device.id, details },
      );
      return {
        id: device.id,
        device_name: device.deviceName,
        platform: input.platform,
        status: "online",
        enrolled_at: timestamp,
        vpn_config: deviceVpnConfig(
          await devicePeerSettings(
            deps,
            device,
            { organizationSubnet, storedServerPublicKey: null },
            policy.policyData,
          ),
          vpnKeys.privateKey,
        ),
        policy: { id: policy.id, name: policy.name, version: policy.version },
        device_token: deviceToken,
        device_token_expires_at: tokenExpiresAt,
        ...(certificate
          ? {
              device_certificate: certificate.signed.pem,
              certificate_expires_at: certificate.signed.expiresAt,
            }
          : {}),
      };
    },
    // Another organization's enrollment (its own turn) may insert the same WireGuard key between this
    // one's check and its insert: the insert then fails, and the run again refuses the key with a 409.
    { isolation: "read committed", retryUniqueViolations: true },
  );
  return await enrollment.catch(async (error: unknown) => {
    // The refusal rolled the enrollment back: its audit entry is written after, in a transaction of its own.
    const reason = enrollmentRefusalReason(error);
    if (reason) await auditEnrollmentRefusal(deps, now, { ...input, hardwareIdHolder }, reason);
    throw error;
  });
}

/**
 * Checks the CSR (400 before the enrollment token is used) and signs the certificate with the CA of the
 * token's organization. An unknown token signs nothing: the transaction answers its 401.
 */
async function signEnrollmentCertificate(
  deps: DomainDeps,
  input: EnrollDeviceInput,
  deviceId: string,
  now: Date,
): Promise<{ organizationId: string; signed: SignedDeviceCertificate } | undefined> {
  const request = await verifyCertificateSigningRequest(input.csr ?? "");
  const organization = await enrollmentTokenOrganization(deps.db, input.enrollmentToken, now);
  if (!organization) return undefined;
  const ca = await deviceCa(deps, organization.id);
  const signed = await signDeviceCertificate(
    ca,
    request,
    { deviceId, organizationName: organization.name },
    now,
  );
  return { organizationId: organization.id, signed };
}
