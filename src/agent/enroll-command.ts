import { ServerRefusal, ServerUnreachable } from "./agent-api";
import { collectFacts } from "./facts/collect-facts";
import { type EnrollOptions, EnrollUsageError, enrollMachine } from "./identity/enroll";
import { StateFolderError } from "./identity/state-folder";

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
 * the server exit 3 with its reason and details, an unreachable server or a TLS failure exit 4. Nothing
 * is written unless the server enrolled the device.
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
  const { os_version } = await collectFacts(options.root);
  try {
    const state = await enrollMachine({
      ...options,
      server: server.origin + server.pathname,
      osVersion: os_version,
    });
    console.error(`Enrolled ${state.device_name} as device ${state.device_id} at ${state.server}`);
    console.log(state.device_id);
  } catch (error) {
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
