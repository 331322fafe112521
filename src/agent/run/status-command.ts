import { readAgentState } from "../identity/agent-state";
import { readDeviceCertificate } from "../identity/device-certificate";
import { statePaths } from "../identity/state-folder";
import { describeClockSkew } from "./cycle";
import { readRuntimeStatus } from "./runtime-status";

/**
 * `bulwark agent status [--json]`: from local state alone (no server needed), who this device is, when
 * it checked in and will next, the last error (with the server's request id), the policy it enforces,
 * its compliance and each setting's enforcement; without --json, said for people, with why the device
 * is not compliant and why it is not checking in.
 */
export function statusCommand(options: { stateDir: string; json: boolean }): void {
  const paths = statePaths(options.stateDir);
  const state = readAgentState(paths);
  const status = readRuntimeStatus(paths.status);
  const certificate = readDeviceCertificate(paths, new Date());
  const report = {
    server: state?.server ?? null,
    device_id: state?.device_id ?? null,
    device_name: state?.device_name ?? null,
    state: state?.state ?? "not_enrolled",
    last_checkin_at: status.last_checkin_at,
    next_checkin_at: status.next_checkin_at,
    last_error: status.last_error,
    policy: status.policy ? { id: status.policy.id, version: status.policy.version } : null,
    applied_policy_version: status.applied_policy_version,
    compliance: status.compliance,
    enforcement: status.enforcement,
    tunnel: state?.tunnel ? { interface: "bulwark", address: state.tunnel.address } : null,
    credential: status.credential,
    certificate: certificate.certificate
      ? {
          serial: certificate.certificate.serial,
          expires_at: certificate.certificate.expiresAt.toISOString(),
        }
      : null,
    certificate_problem: certificate.problem,
    certificate_refused: status.certificate_refused,
    certificate_renewal_error: status.certificate_renewal_error,
    clock_offset_seconds: status.clock_offset_ms === null ? null : Math.round(status.clock_offset_ms / 1000),
  };
  if (options.json) {
    console.log(JSON.stringify(report, null, 2));
    return;
  }
  const lines: string[] = [];
  if (!state) {
    lines.push(`Not enrolled (${options.stateDir} holds no enrollment): run bulwark agent enroll.`);
    console.log(lines.join("\n"));
    return;
  }
  lines.push(`Device ${state.device_name} (${state.device_id}) of ${state.server}: ${state.state}`);
  if (state.state === "unenroll_pending") {
    lines.push(
      "Unenrolled here: the machine is restored and nothing is enforced; the server has not been told yet.",
    );
    const next = status.next_checkin_at ? `; next try at ${status.next_checkin_at}` : "";
    if (status.last_error)
      lines.push(
        `The server could not be told at ${status.last_error.at}: ${status.last_error.message}${next}`,
      );
    lines.push("The service tells it when it can; bulwark agent unenroll tries again now.");
    console.log(lines.join("\n"));
    return;
  }
  if (state.state === "wiped") {
    lines.push(
      "Its work data was erased and its enforcement undone; it checks in no more: enroll it again to manage it.",
    );
    lines.push(`Last check-in: ${status.last_checkin_at ?? "never"}`);
    console.log(lines.join("\n"));
    return;
  }
  if (state.state === "needs_enrollment")
    lines.push("The server no longer knows this device: enroll it again. The last policy stays enforced.");
  lines.push(
    `Last check-in: ${status.last_checkin_at ?? "never"}; next: ${status.next_checkin_at ?? "at the next run"}`,
  );
  if (status.last_error) {
    // A refusal's message names its request already ("[request X]"); an older status.json's may not.
    const { at, message, request_id: requestId } = status.last_error;
    const request = requestId && !message.includes(requestId) ? ` (request ${requestId})` : "";
    lines.push(`Not checking in since ${at}: ${message}${request}`);
  }
  lines.push(...credentialLines(report));
  if (status.clock_offset_ms !== null && Math.abs(status.clock_offset_ms) > 60_000)
    lines.push(
      `Warning: this machine's clock is ${describeClockSkew(status.clock_offset_ms)} the server's (fix it: timedatectl set-ntp true); credentials are renewed by the server's clock.`,
    );
  if (status.policy) lines.push(`Policy ${status.policy.id}, version ${status.policy.version}`);
  if (status.compliance) {
    lines.push(`Compliance: ${status.compliance.status}`);
    for (const violation of status.compliance.violations)
      lines.push(
        `  ${violation.rule} (${violation.severity}): required ${JSON.stringify(violation.required)}, actual ${JSON.stringify(violation.actual)}`,
      );
  }
  if (status.enforcement.length > 0) {
    lines.push("Enforcement:");
    for (const entry of status.enforcement)
      lines.push(`  ${entry.setting}: ${entry.outcome}${entry.detail ? ` (${entry.detail})` : ""}`);
  }
  console.log(lines.join("\n"));
}

/** How the device authenticates, and what is wrong with its certificate, said for people. */
function credentialLines(report: {
  server: string | null;
  credential: string | null;
  certificate: { serial: string; expires_at: string } | null;
  certificate_problem: string | null;
  certificate_refused: { reason: string; at: string } | null;
  certificate_renewal_error: { message: string; at: string } | null;
}): string[] {
  const lines: string[] = [];
  if (report.certificate)
    lines.push(`Certificate ${report.certificate.serial}, expires ${report.certificate.expires_at}`);
  if (report.certificate_problem) lines.push(`Certificate not usable: ${report.certificate_problem}`);
  if (report.credential)
    lines.push(
      `Authenticates with: ${report.credential === "device_certificate" ? "its device certificate (TLS)" : "its device token"}`,
    );
  if (report.certificate && report.server?.startsWith("http:"))
    lines.push("The server is plain http: the certificate can only be presented over https.");
  if (report.certificate_refused)
    lines.push(
      `The server refused the certificate at ${report.certificate_refused.at} (${report.certificate_refused.reason})` +
        (report.certificate_refused.reason === "device_token_required"
          ? ": it never saw it; a TLS proxy in front must forward it (Client-Cert)."
          : "."),
    );
  if (report.certificate_renewal_error)
    lines.push(
      `Certificate renewal failed at ${report.certificate_renewal_error.at}: ${report.certificate_renewal_error.message}`,
    );
  return lines;
}
