import { ServerRefusal, ServerUnreachable, UnexpectedAnswer } from "./agent-api";
import { type EnrollOptions, EnrollUsageError, enrollMachine } from "./identity/enroll";
import { StateFolderError } from "./identity/state-folder";
import { currentPlatform } from "./platform";

/** An agent command's end with its own exit code (enroll: 3 refused by the server, 4 unreachable). */
export class AgentExit extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

/** What `bulwark agent enroll` was given: the enrollment without the OS version, which it reads. */
export type EnrollCommandOptions = Omit<EnrollOptions, "osVersion">;

/**
 * `bulwark agent enroll`: prints the device id (exit 0); a usage problem is exit 2 (EnrollUsageError,
 * mapped by the caller; a state folder this user cannot write, found before any request), a refusal by
 * the server exit 3 with its reason and details, an unreachable server, a TLS failure or a URL that is
 * not a Bulwark server's base URL exit 4. Nothing is written unless the server enrolled the device.
 */
export async function enrollCommand(options: EnrollCommandOptions): Promise<void> {
  let server: URL;
  try {
    server = new URL(options.server);
  } catch {
    throw new EnrollUsageError(`--server ${options.server}: not a URL such as https://bulwark.example.com`);
  }
  if (server.protocol !== "https:" && server.protocol !== "http:")
    throw new EnrollUsageError(`--server ${options.server}: must be an http(s) URL`);
  if (options.caFile && options.caSha256)
    throw new EnrollUsageError("--ca-file and --ca-sha256 both name the server's CA: give one");
  if (server.protocol === "http:") {
    if (options.caSha256 || options.caFile)
      throw new EnrollUsageError(`--server ${options.server} is plain http: a CA has nothing to verify`);
    if (!isLoopback(server.hostname)) {
      const unprotected =
        "the device token, the policies and wipe commands it receives, and the reports it sends would cross the network unprotected: anyone on the way could read them or change them";
      if (!options.insecureHttp)
        throw new EnrollUsageError(
          `--server ${options.server} is plain http: ${unprotected}. Use the server's https:// address (with --ca-file or --ca-sha256 for a private CA), or accept this with --insecure-http`,
        );
      console.error(`Warning: ${options.server} is plain http (--insecure-http): ${unprotected}`);
    }
  }
  const { os_version } = await currentPlatform().collectFacts(options.root);
  try {
    const state = await enrollMachine({
      ...options,
      server: server.origin + server.pathname,
      osVersion: os_version,
    });
    console.error(`Enrolled ${state.device_name} as device ${state.device_id} at ${state.server}`);
    console.log(state.device_id);
  } catch (error) {
    const notBulwark = notBulwarkAnswer(error);
    if (notBulwark)
      throw new AgentExit(
        `${options.server} is not a Bulwark server's base URL: give the address the console is served from, without /console or /api/v1 (${notBulwark}); nothing was written`,
        4,
      );
    if (error instanceof ServerRefusal)
      throw new AgentExit(
        `enrollment refused by ${options.server}: ${error.reason}${error.details ? ` (${error.details})` : ""}${error.requestId ? ` [request ${error.requestId}]` : ""}; nothing was written`,
        3,
      );
    if (error instanceof ServerUnreachable) throw new AgentExit(`${error.message}; nothing was written`, 4);
    if (error instanceof StateFolderError)
      throw new AgentExit(`${error.message}; nothing was sent to the server`, error.exitCode);
    throw error;
  }
}

/** Whether the host is this machine (localhost, 127.0.0.0/8, ::1): plain http there crosses no network. */
function isLoopback(hostname: string): boolean {
  const host = hostname.replace(/^\[|\]$/g, "").toLowerCase();
  return host === "localhost" || host === "::1" || /^127(\.\d{1,3}){3}$/.test(host);
}

/** Answers that routing on this server never gives: the enrollment route is not at this URL. */
const WRONG_PLACE = new Set(["route_not_found", "method_not_allowed"]);

/**
 * What the server answered when it is not a Bulwark server's base URL (a path such as /api/v1 or
 * /console added, another web server, a proxy's page), or null for a real Bulwark answer.
 */
function notBulwarkAnswer(error: unknown): string | null {
  if (error instanceof UnexpectedAnswer) return error.message;
  if (!(error instanceof ServerRefusal)) return null;
  if (!error.isErrorBody) return `it answered HTTP ${error.status}, not Bulwark's JSON error`;
  if (WRONG_PLACE.has(error.reason))
    return `it answered ${error.status} ${error.reason}${error.details ? `: ${error.details}` : ""}`;
  return null;
}
