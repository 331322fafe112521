/**
 * openssl as the independent counterpart for device certificates: it makes the keys and CSRs an agent
 * would send, verifies what Bulwark issues against ca.pem, and reads the certificates' fields.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { callServer, type RunningServer } from "./binary";

/** Key kinds `openssl req -newkey` can make. */
export type KeyKind = "p256" | "p384" | "rsa1024" | "rsa2048" | "ed25519";

const NEWKEY: Record<KeyKind, string[]> = {
  p256: ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256"],
  p384: ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-384"],
  rsa1024: ["-newkey", "rsa:1024"],
  rsa2048: ["-newkey", "rsa:2048"],
  ed25519: ["-newkey", "ed25519"],
};

/**
 * Runs openssl in a fresh folder holding `files`; returns its output and the contents of `outputs`
 * (files it wrote), then removes the folder.
 */
export function openssl(args: string[], files: Record<string, string> = {}, outputs: string[] = []) {
  const folder = mkdtempSync(join(tmpdir(), "bulwark-pki-"));
  try {
    for (const [name, text] of Object.entries(files)) writeFileSync(join(folder, name), text);
    const run = Bun.spawnSync(["openssl", ...args], { cwd: folder, stdout: "pipe", stderr: "pipe" });
    const written: Record<string, string> = {};
    if (run.exitCode === 0)
      for (const name of outputs) written[name] = readFileSync(join(folder, name), "utf8");
    return { exitCode: run.exitCode, stdout: run.stdout.toString(), stderr: run.stderr.toString(), written };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** A private key and a PKCS#10 request for it, as an agent would make them with `openssl req`. */
export function makeCsr(kind: KeyKind = "p256", subject = "/CN=agent"): { key: string; csr: string } {
  const run = openssl(
    ["req", "-new", ...NEWKEY[kind], "-nodes", "-subj", subject, "-keyout", "key.pem", "-out", "csr.pem"],
    {},
    ["key.pem", "csr.pem"],
  );
  if (run.exitCode !== 0) throw new Error(`openssl req failed: ${run.stderr}`);
  return { key: run.written["key.pem"] ?? "", csr: run.written["csr.pem"] ?? "" };
}

/** `openssl verify -CAfile ca.pem cert.pem`: its exit code and output. */
export function opensslVerify(caPem: string, certificatePem: string) {
  const run = openssl(["verify", "-CAfile", "ca.pem", "-purpose", "sslclient", "cert.pem"], {
    "ca.pem": caPem,
    "cert.pem": certificatePem,
  });
  return { ok: run.exitCode === 0, output: `${run.stdout}${run.stderr}`.trim() };
}

/** What `openssl x509` prints of a certificate: subject, serial, validity, key usage. */
export function certificateFields(certificatePem: string) {
  const run = openssl(
    [
      "x509",
      "-in",
      "cert.pem",
      "-noout",
      "-subject",
      "-serial",
      "-startdate",
      "-enddate",
      "-nameopt",
      "RFC2253",
      "-ext",
      "basicConstraints,extendedKeyUsage",
    ],
    { "cert.pem": certificatePem },
  );
  if (run.exitCode !== 0) throw new Error(`openssl x509 failed: ${run.stderr}`);
  const field = (name: string) => new RegExp(`^${name}=(.*)$`, "m").exec(run.stdout)?.[1]?.trim() ?? "";
  return {
    subject: field("subject"),
    serial: field("serial"),
    notBefore: new Date(field("notBefore")),
    notAfter: new Date(field("notAfter")),
    text: run.stdout,
  };
}

/**
 * An ECDSA P-256 self-signed certificate (2 days, or `days`) and its key, made by `openssl req -x509`: a test CA,
 * or a server certificate when `subjectAltName` names the host (e.g. "DNS:localhost,IP:127.0.0.1").
 */
export function selfSignedCertificate(
  subject: string,
  subjectAltName?: string,
  days = 2,
): { certificate: string; key: string } {
  const run = openssl(
    [
      "req",
      "-x509",
      "-newkey",
      "ec",
      "-pkeyopt",
      "ec_paramgen_curve:P-256",
      "-nodes",
      "-days",
      String(days),
      "-subj",
      subject,
      ...(subjectAltName ? ["-addext", `subjectAltName=${subjectAltName}`] : []),
      "-keyout",
      "key.pem",
      "-out",
      "cert.pem",
    ],
    {},
    ["key.pem", "cert.pem"],
  );
  if (run.exitCode !== 0) throw new Error(`openssl req -x509 failed: ${run.stderr}`);
  return { certificate: run.written["cert.pem"] ?? "", key: run.written["key.pem"] ?? "" };
}

/**
 * A CA of our own making (not Bulwark's) and a client certificate it signs for `commonName`: what an
 * attacker who knows a device id could forge.
 */
export function forgeCertificate(
  commonName: string,
  organization: string,
): { certificate: string; key: string } {
  const ca = selfSignedCertificate(`/CN=Bulwark device CA/O=${organization}`);
  const { key, csr } = makeCsr("p256", `/CN=${commonName}/O=${organization}`);
  const signed = openssl(
    [
      "x509",
      "-req",
      "-in",
      "csr.pem",
      "-CA",
      "ca.pem",
      "-CAkey",
      "ca.key",
      "-CAcreateserial",
      "-days",
      "2",
      "-out",
      "cert.pem",
    ],
    { "csr.pem": csr, "ca.pem": ca.certificate, "ca.key": ca.key },
    ["cert.pem"],
  );
  if (signed.exitCode !== 0) throw new Error(`openssl x509 -req failed: ${signed.stderr}`);
  return { certificate: signed.written["cert.pem"] ?? "", key };
}

/** RFC 9440's Client-Cert value: the certificate's DER bytes as a structured-field byte sequence. */
export function clientCertHeader(certificatePem: string): string {
  const der = certificatePem.replace(/-----(BEGIN|END) CERTIFICATE-----/g, "").replace(/\s+/g, "");
  return `:${der}:`;
}

/**
 * Enrolls a device on a running server with a CSR made by openssl: its key, certificate and id, and the
 * organization's device CA (what a proxy in front verifies device certificates against).
 */
export async function enrollWithCertificate(
  server: RunningServer,
  adminToken: string,
  organizationId: string,
  device: { name: string; platform: string },
) {
  const enrollment = await callServer(server, "POST", "/api/v1/enrollment-tokens", adminToken, {});
  const { key, csr } = makeCsr("p256");
  const enrolled = await callServer(server, "POST", "/api/v1/devices/enroll", undefined, {
    enrollment_token: enrollment.token,
    device_name: device.name,
    platform: device.platform,
    agent_version: "1.0.0",
    hardware_id: `hw-${crypto.randomUUID()}`,
    csr,
  });
  const ca = await (
    await fetch(`${server.url}/api/v1/agent/ca.pem?organization_id=${organizationId}`)
  ).text();
  return {
    device: { key, certificate: enrolled.device_certificate as string, id: enrolled.id as string },
    ca,
  };
}
