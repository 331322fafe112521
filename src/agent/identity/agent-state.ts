import { readIfPresent, type StatePaths, writeFileAtomic } from "./state-folder";

/** The tunnel settings the server gave (enrollment's vpn_config, then each check-in's). */
export interface TunnelSettings {
  endpoint: string;
  address: string;
  server_public_key: string;
  allowed_ips: string[];
  dns: string[];
  persistent_keepalive: number;
}

/** What the agent keeps between runs (state.json); keys and the certificate are files of their own. */
export interface AgentState {
  format: 1;
  /** The server's base URL, as given to enroll. */
  server: string;
  /**
   * A CA file that verifies the server's TLS certificate, when not the system's: the absolute path of
   * enroll's copy (STATE/server-ca.pem); an older enrollment kept the path it was given.
   */
  ca_file: string | null;
  device_id: string;
  device_name: string;
  hardware_id: string;
  device_token: string;
  device_token_expires_at: string;
  /** When the device certificate (device.crt) expires; null without one. */
  certificate_expires_at: string | null;
  /**
   * enrolled; needs_enrollment (the server no longer knows this identity); wiped (a wipe completed);
   * unenroll_pending (unenroll restored the machine, the server is yet to be told: nothing is enforced).
   */
  state: "enrolled" | "needs_enrollment" | "wiped" | "unenroll_pending";
  /** Folders a wipe empties besides the policy's work paths (enroll --work-dir; machine paths, not under ROOT). */
  work_dirs: string[];
  tunnel: TunnelSettings | null;
  enrolled_at: string;
}

/** The agent's state, or null when the folder holds none (not enrolled). */
export function readAgentState(paths: StatePaths): AgentState | null {
  const text = readIfPresent(paths.state);
  if (text === null) return null;
  const parsed = JSON.parse(text) as AgentState;
  if (parsed.format !== 1) throw new Error(`${paths.state}: unknown state format ${String(parsed.format)}`);
  return parsed;
}

export function writeAgentState(paths: StatePaths, state: AgentState): void {
  writeFileAtomic(paths.state, `${JSON.stringify(state, null, 2)}\n`);
}
