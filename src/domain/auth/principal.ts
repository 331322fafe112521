import type { Actor } from "../deps";
import type { Role, Scope } from "./scopes";

/** An authenticated caller: a signed-in user or an API key acting for its creator. */
export interface Principal {
  kind: "user" | "api_key";
  userId: string;
  email: string;
  organizationId: string;
  plan: "standard" | "enterprise";
  role: Role;
  /** Granted scopes, `admin` not expanded. */
  scopes: Scope[];
  sessionId: string | null;
  apiKeyId: string | null;
  apiKeyName: string | null;
  accessTokenJti: string | null;
  /**
   * The organization requires MFA and this user has no factor yet: the session is good only for setting
   * one up (`/users/me`, `/auth/mfa/*`, sign-out). Never true for API keys or SSO sessions.
   */
  mfaSetupPending: boolean;
}

/** The audit actor for a principal seen from `ip`. */
export function actorOf(principal: Principal, ip: string | null): Actor {
  return principal.kind === "api_key"
    ? {
        type: "api_key",
        id: principal.apiKeyId,
        label: `${principal.apiKeyName} (${principal.email})`,
        organizationId: principal.organizationId,
        ip,
      }
    : {
        type: "user",
        id: principal.userId,
        label: principal.email,
        organizationId: principal.organizationId,
        ip,
      };
}
