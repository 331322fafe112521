import type { InterfaceIdentity } from "../enforce/tunnel-interface";
import { readIfPresent, writeFileAtomic } from "../identity/state-folder";

/** One policy setting's enforcement on this machine, as reported to the server. */
export interface EnforcementOutcome {
  setting: string;
  outcome: "enforced" | "reported" | "unsupported" | "failed" | "pending_approval";
  detail?: string;
}

export interface ComplianceViolation {
  rule: string;
  required: unknown;
  actual: unknown;
  severity: string;
}

/**
 * What the agent knows of its last cycles (status.json beside state.json): enough for `status` to say,
 * without reaching the server, why the device is not compliant and why it is not checking in.
 */
export interface RuntimeStatus {
  last_checkin_at: string | null;
  next_checkin_at: string | null;
  /** The last failure, with the server's request id when it answered. */
  last_error: { message: string; request_id: string | null; at: string } | null;
  /** Failed check-ins in a row (the backoff's step). */
  failures: number;
  /** Since when the server answers 401 without a success in between. */
  first_unauthenticated_at: string | null;
  /** The last policy the server sent: kept enforced while the server is away. */
  policy: { id: string; version: number; policy_data: Record<string, unknown> } | null;
  /** The version the last enforcement applied (reported at the next check-in). */
  applied_policy_version: number | null;
  compliance: { status: string; violations: ComplianceViolation[] } | null;
  enforcement: EnforcementOutcome[];
  /** What the last check-in authenticated with. */
  credential: "device_certificate" | "device_token" | null;
  /** The server's 401 to the device certificate (the token was used instead), until a renewal. */
  certificate_refused: { reason: string; at: string } | null;
  /** Why the last renewal of the certificate failed (tried again an hour later). */
  certificate_renewal_error: { message: string; at: string } | null;
  /** The tunnel's interface this enrollment brought up: the only one it reconfigures or takes down. */
  tunnel_interface: InterfaceIdentity | null;
  /** The server's clock less this machine's at the last check-in (ms): credentials are renewed by the server's. */
  clock_offset_ms: number | null;
  /** When (the server's time) the device token was last rotated, and the certificate last renewed: once a day at most. */
  token_rotated_at: string | null;
  certificate_renewed_at: string | null;
}

export const EMPTY_STATUS: RuntimeStatus = {
  last_checkin_at: null,
  next_checkin_at: null,
  last_error: null,
  failures: 0,
  first_unauthenticated_at: null,
  policy: null,
  applied_policy_version: null,
  compliance: null,
  enforcement: [],
  credential: null,
  certificate_refused: null,
  certificate_renewal_error: null,
  tunnel_interface: null,
  clock_offset_ms: null,
  token_rotated_at: null,
  certificate_renewed_at: null,
};

export function readRuntimeStatus(path: string): RuntimeStatus {
  const text = readIfPresent(path);
  return text === null
    ? { ...EMPTY_STATUS }
    : { ...EMPTY_STATUS, ...(JSON.parse(text) as Partial<RuntimeStatus>) };
}

export function writeRuntimeStatus(path: string, status: RuntimeStatus): void {
  writeFileAtomic(path, `${JSON.stringify(status, null, 2)}\n`);
}
