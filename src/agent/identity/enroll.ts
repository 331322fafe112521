import { X509Certificate } from "node:crypto";
import { join, resolve } from "node:path";
import { generateWireGuardKeyPair } from "../../lib/wireguard";
import { VERSION } from "../../version";
import { agentApi, answerOf, ServerUnreachable, UnexpectedAnswer } from "../agent-api";
import { checkAnswer } from "../check-answer";
import { runCommand } from "../enforce/apply";
import { currentPlatform } from "../platform";
import { type AgentState, readAgentState, writeAgentState } from "./agent-state";
import { makeCertificateRequest } from "./certificate-request";
import { PEM_CERTIFICATE, readServerCa, ServerCaError } from "./server-ca";
import {
  claimStateFolder,
  prepareStateFolder,
  removeCreatedFolders,
  type StatePaths,
  statePaths,
  writeFileAtomic,
} from "./state-folder";

/** A command line that cannot be carried out as given (exit 2). */
export class EnrollUsageError extends Error {}

export interface EnrollOptions {
  server: string;
  token: string;
  name?: string;
  hardwareId?: string;
  workDirs: string[];
  caFile?: string;
  /** The SHA-256 of the server's CA (hex, colons allowed): fetched from the server and kept when it matches. */
  caSha256?: string;
  /** Enroll over plain http to a server that is not this machine, knowingly. */
  insecureHttp?: boolean;
  withCertificate: boolean;
  force: boolean;
  root: string;
  stateDir: string;
  /** `ID VERSION_ID` of the machine, when known. */
  osVersion?: string;
}

/**
 * The server's CA pinned by its SHA-256 (`--ca-sha256`, from the administrator's console): fetched from
 * `GET /api/v1/agent/server-ca` without trusting the connection, and kept only when its digest is the one
 * given, so that whoever answers cannot substitute their own. Nothing else is sent before.
 */
async function caOfFingerprint(server: string, fingerprint: string): Promise<string> {
  const wanted = fingerprint.replaceAll(":", "").toLowerCase();
  if (!/^[0-9a-f]{64}$/.test(wanted))
    throw new EnrollUsageError(`--ca-sha256 ${fingerprint}: not a SHA-256 (64 hex digits, colons allowed)`);
  const url = `${server.replace(/\/+$/, "")}/api/v1/agent/server-ca`;
  let text: string;
  try {
    const response = await fetch(url, {
      tls: { rejectUnauthorized: false },
      signal: AbortSignal.timeout(30_000),
    } as RequestInit);
    if (!response.ok)
      throw new ServerUnreachable(
        `${url} answered ${response.status}: the server offers no CA to pin (it does not terminate TLS itself?); give --ca-file`,
      );
    text = await response.text();
  } catch (error) {
    if (error instanceof ServerUnreachable) throw error;
    throw new ServerUnreachable(`${url}: ${(error as Error).message}`);
  }
  const pinned = (text.match(PEM_CERTIFICATE) ?? []).find((block) => {
    try {
      return new X509Certificate(block).fingerprint256.replaceAll(":", "").toLowerCase() === wanted;
    } catch {
      return false;
    }
  });
  if (pinned === undefined)
    throw new ServerUnreachable(
      `the CA ${url} offers is not the one --ca-sha256 names: this may not be your server (or its certificate changed); nothing was sent`,
    );
  return `${pinned}\n`;
}

/** The CA certificates of `--ca-file`, or a usage error naming the file and why it cannot be used. */
function caOfOption(path: string): string {
  try {
    return readServerCa(path);
  } catch (error) {
    if (error instanceof ServerCaError) throw new EnrollUsageError(`--ca-file ${path}: ${error.message}`);
    throw error;
  }
}

/**
 * Enrolls this machine: the state folder is made (0700) and proven writable first (StateFolderError,
 * before any request), its keys are made here (the WireGuard private key and the certificate's key
 * never leave it), the server is asked with the enrollment token, and only then is anything written to
 * the state folder, atomically, 0600 in a 0700 folder (state.json last). A refusal throws the server's
 * ServerRefusal, an unreachable server ServerUnreachable; neither leaves a file behind, nor the folder
 * when this made it.
 */
export async function enrollMachine(options: EnrollOptions): Promise<AgentState> {
  // The folder must take the identity before the server is asked for one: a device enrolled on the
  // server that cannot be kept here would hold this machine's hardware id for nothing.
  const created = claimStateFolder(options.stateDir);
  try {
    const warning = await currentPlatform().secureStateFolder(options.stateDir, runCommand);
    if (warning !== null) console.error(warning);
    return await enrollInto(statePaths(options.stateDir), options);
  } catch (error) {
    removeCreatedFolders(created);
    throw error;
  }
}

async function enrollInto(paths: StatePaths, options: EnrollOptions): Promise<AgentState> {
  const existing = readAgentState(paths);
  if (existing && existing.state !== "wiped" && !options.force)
    throw new EnrollUsageError(
      `${options.stateDir} already holds the enrolled device ${existing.device_id} (${existing.device_name}) of ${existing.server}; run bulwark agent unenroll first, or enroll again with --force (an administrator must first retire the old device: the console, or POST /api/v1/devices/${existing.device_id}/retire)`,
    );
  const platform = currentPlatform();
  const machine = await platform.identity(options.root, runCommand);
  const deviceName = options.name ?? machine.name;
  if (!deviceName)
    throw new EnrollUsageError(
      platform.name === "windows"
        ? "this machine's name (COMPUTERNAME) is unknown: give one with --name"
        : `no host name in ${join(options.root, "etc/hostname")}: give one with --name`,
    );
  const hardwareId = options.hardwareId ?? machine.hardwareId;
  if (!hardwareId)
    throw new EnrollUsageError(
      platform.name === "windows"
        ? "no MachineGuid in HKLM\\SOFTWARE\\Microsoft\\Cryptography: give one with --hardware-id"
        : `no machine id in ${join(options.root, "sys/class/dmi/id/product_uuid")} or ${join(options.root, "etc/machine-id")}: give one with --hardware-id`,
    );
  const ca = options.caFile
    ? caOfOption(options.caFile)
    : options.caSha256
      ? await caOfFingerprint(options.server, options.caSha256)
      : null;

  const wireGuard = generateWireGuardKeyPair();
  const certificateRequest = options.withCertificate ? await makeCertificateRequest(hardwareId) : null;
  const api = agentApi(options.server, { ca });
  const enrolled = checkAnswer(
    "enrollment",
    answerOf(
      await api
        .POST("/api/v1/devices/enroll", {
          body: {
            enrollment_token: options.token,
            device_name: deviceName,
            platform: platform.name,
            agent_version: VERSION,
            hardware_id: hardwareId,
            ...(options.osVersion ? { os_version: options.osVersion } : {}),
            public_key: wireGuard.publicKey,
            ...(certificateRequest ? { csr: certificateRequest.csrPem } : {}),
          },
        })
        .catch((error: unknown) => {
          // A success that is not JSON (a web page served for any path).
          if (error instanceof SyntaxError)
            throw new UnexpectedAnswer("it answered a success that is not JSON");
          throw error;
        }),
    ),
  );
  if (typeof enrolled?.id !== "string" || typeof enrolled.device_token !== "string" || !enrolled.vpn_config)
    throw new UnexpectedAnswer("its answer is not an enrollment");

  prepareStateFolder(options.stateDir);
  writeFileAtomic(paths.wireGuardKey, `${wireGuard.privateKey}\n`);
  // A copy of the CA in the state folder: the service runs from another folder than enroll did, and
  // the file given may be moved or deleted later.
  if (ca) writeFileAtomic(paths.serverCa, ca);
  if (certificateRequest && enrolled.device_certificate) {
    writeFileAtomic(paths.certificateKey, certificateRequest.privateKeyPem);
    writeFileAtomic(paths.certificate, enrolled.device_certificate);
  }
  const vpn = enrolled.vpn_config;
  const state: AgentState = {
    format: 1,
    server: options.server.replace(/\/+$/, ""),
    ca_file: ca ? resolve(paths.serverCa) : null,
    device_id: enrolled.id,
    device_name: enrolled.device_name,
    hardware_id: hardwareId,
    device_token: enrolled.device_token,
    device_token_expires_at: enrolled.device_token_expires_at,
    certificate_expires_at: enrolled.certificate_expires_at ?? null,
    state: "enrolled",
    work_dirs: options.workDirs,
    tunnel: {
      endpoint: vpn.endpoint,
      address: vpn.address,
      server_public_key: vpn.server_public_key,
      allowed_ips: vpn.allowed_ips,
      dns: vpn.dns,
      persistent_keepalive: vpn.persistent_keepalive,
    },
    enrolled_at: enrolled.enrolled_at,
  };
  writeAgentState(paths, state);
  return state;
}
