import { createPrivateKey, X509Certificate } from "node:crypto";
import { agentApi, answerOf } from "../agent-api";
import { checkAnswer } from "../check-answer";
import type { AgentState } from "./agent-state";
import { makeCertificateRequest } from "./certificate-request";
import { ServerCaError, serverCaOf } from "./server-ca";
import { readIfPresent, type StatePaths, writeFileAtomic } from "./state-folder";

/** The certificate is renewed when it has less than this left (it lives a year). */
export const CERTIFICATE_RENEWAL_MS = 30 * 24 * 3600 * 1000;

/** The device certificate and its key, as presented in the TLS handshake. */
export interface DeviceCertificate {
  cert: string;
  key: string;
  serial: string;
  expiresAt: Date;
}

/**
 * The device certificate of the state folder: usable (both files there, the key the certificate's, and
 * valid now), or the problem that keeps it from being used (the device then authenticates with its token
 * and renews the certificate). Neither when the device was enrolled without one.
 */
export function readDeviceCertificate(
  paths: StatePaths,
  now: Date,
): { certificate: DeviceCertificate | null; problem: string | null } {
  const cert = readIfPresent(paths.certificate);
  const key = readIfPresent(paths.certificateKey);
  if (cert === null && key === null) return { certificate: null, problem: null };
  if (cert === null || key === null)
    return {
      certificate: null,
      problem: `${cert === null ? paths.certificate : paths.certificateKey} is missing`,
    };
  let parsed: X509Certificate;
  try {
    parsed = new X509Certificate(cert);
    if (!parsed.checkPrivateKey(createPrivateKey(key)))
      return { certificate: null, problem: `${paths.certificateKey} is not the key of ${paths.certificate}` };
  } catch (error) {
    return { certificate: null, problem: `${paths.certificate}: ${(error as Error).message}` };
  }
  const expiresAt = parsed.validToDate;
  if (expiresAt.getTime() <= now.getTime())
    return { certificate: null, problem: `the device certificate expired at ${expiresAt.toISOString()}` };
  if (parsed.validFromDate.getTime() > now.getTime())
    return {
      certificate: null,
      problem: `the device certificate is valid only from ${parsed.validFromDate.toISOString()} (is this machine's clock right?)`,
    };
  return { certificate: { cert, key, serial: parsed.serialNumber.toLowerCase(), expiresAt }, problem: null };
}

/** Reasons of a 401 that say the certificate itself is no longer good: only a new one helps. */
const CERTIFICATE_GONE = new Set([
  "client_certificate_revoked",
  "client_certificate_expired",
  "client_certificate_unknown",
]);

/**
 * Whether the certificate should be renewed now: the device has one (or had one: a file is missing or
 * does not match), and it expires within 30 days, cannot be used, or the server said it is revoked or
 * unknown. A device enrolled without a certificate never gets one this way.
 */
export function needsCertificateRenewal(
  state: AgentState,
  read: ReturnType<typeof readDeviceCertificate>,
  refusedReason: string | null,
  now: Date,
): boolean {
  if (read.certificate === null) return read.problem !== null || state.certificate_expires_at !== null;
  if (refusedReason !== null && CERTIFICATE_GONE.has(refusedReason)) return true;
  return read.certificate.expiresAt.getTime() - now.getTime() < CERTIFICATE_RENEWAL_MS;
}

/**
 * Renews the device certificate: a new key made here (it never leaves the machine) and its CSR sent to
 * `POST /agent/certificate`; the server revokes the earlier certificate as it signs the new one. The key
 * and then the certificate are each written atomically; a crash between the two leaves a pair that does
 * not match, which `readDeviceCertificate` notices: the device then uses its token and renews again.
 */
export async function renewDeviceCertificate(
  api: ReturnType<typeof agentApi>,
  paths: StatePaths,
  state: AgentState,
): Promise<{ expiresAt: string }> {
  const request = await makeCertificateRequest(state.device_id);
  const renewed = checkAnswer(
    "renewedCertificate",
    answerOf(await api.POST("/api/v1/agent/certificate", { body: { csr: request.csrPem } })),
  );
  writeFileAtomic(paths.certificateKey, request.privateKeyPem);
  writeFileAtomic(paths.certificate, renewed.device_certificate);
  return { expiresAt: renewed.certificate_expires_at };
}

/** After the server refused the certificate, the device uses its token for this long before trying again. */
const CERTIFICATE_RETRY_MS = 24 * 3600 * 1000;

/**
 * The API client of an enrolled device, with its CA file, its token and its certificate (unless the
 * certificate cannot be used, or the server refused it in the last day: a proxy that does not forward
 * it would otherwise cost a second request every cycle).
 */
export function deviceApi(
  paths: StatePaths,
  state: AgentState,
  options: {
    now: Date;
    certificateRefusedAt?: string | null;
    onCertificateRefused?: (reason: string) => void;
  },
) {
  // A CA that cannot be read fails each request as an unreachable server, naming the file: a check-in
  // records it for `status`, and the last policy stays enforced.
  let ca: string | null = null;
  let caProblem: string | null = null;
  try {
    ca = serverCaOf(state);
  } catch (error) {
    if (!(error instanceof ServerCaError)) throw error;
    caProblem = error.message;
  }
  const { certificate } = readDeviceCertificate(paths, options.now);
  const refusedAt = options.certificateRefusedAt ? Date.parse(options.certificateRefusedAt) : null;
  const isResting = refusedAt !== null && options.now.getTime() - refusedAt < CERTIFICATE_RETRY_MS;
  return agentApi(state.server, {
    ca,
    caProblem,
    token: state.device_token,
    certificate: certificate && !isResting ? { cert: certificate.cert, key: certificate.key } : null,
    ...(options.onCertificateRefused ? { onCertificateRefused: options.onCertificateRefused } : {}),
  });
}
