import type { Config } from "../../config/config-schema";
import { isIP } from "../../lib/ip-version";
import { UnavailableError } from "../errors";

export interface RelyingParty {
  id: string;
  name: string;
  origins: string[];
}

/**
 * The WebAuthn relying party: its id is the host of server.base_url, its origins auth.webauthn_origins
 * (default: the origin of server.base_url). WebAuthn refuses IP addresses as relying party ids.
 */
export function relyingParty(config: Readonly<Config>): RelyingParty {
  const base = new URL(config.server.base_url);
  const id = base.hostname.replace(/^\[|\]$/g, "");
  if (isIP(id) !== 0)
    throw new UnavailableError(
      "webauthn_unavailable",
      "passkeys and security keys are not available on this server",
      `WebAuthn needs server.base_url with a host name, not the IP address ${id} (for this machine: http://localhost:${base.port || 80})`,
    );
  const origins = config.auth.webauthn_origins.map((origin) => origin.replace(/\/$/, ""));
  return { id, name: "Bulwark", origins: origins.length > 0 ? origins : [base.origin] };
}
