import {
  api,
  currentAccessToken,
  refreshAccessToken,
  type Schemas,
  setAccessToken,
  unwrap,
  whenMfaSetupRequired,
  whenSessionLost,
} from "../api/client";
import { createStore } from "./store";

export type Scope =
  | "devices:read"
  | "devices:write"
  | "policies:read"
  | "policies:write"
  | "users:read"
  | "users:write"
  | "audit:read"
  | "vpn:read"
  | "vpn:report"
  | "admin";

export interface Session {
  user: Schemas["User"];
  scopes: string[];
  /** The organization requires MFA and this user has none yet: only the account page works. */
  mfaSetupRequired: boolean;
}

/** Who is signed in: undefined while the page checks its refresh cookie, null when nobody is. */
export const sessionStore = createStore<Session | null | undefined>(undefined);

function claimsOf(token: string): { scopes?: string[] } {
  try {
    const payload = token.split(".")[1] ?? "";
    return JSON.parse(atob(payload.replace(/-/g, "+").replace(/_/g, "/"))) as { scopes?: string[] };
  } catch {
    return {};
  }
}

/** What a signed-in user may do: `admin` implies every scope. */
export function can(session: Session | null | undefined, scope: Scope): boolean {
  if (!session || session.mfaSetupRequired) return false;
  return session.scopes.includes("admin") || session.scopes.includes(scope);
}

/** Starts a session from a sign-in's answer (its refresh token is already in the cookie). */
export async function startSession(token: string, mfaSetupRequired = false): Promise<void> {
  setAccessToken(token);
  const user = await unwrap(api.GET("/api/v1/users/me"));
  sessionStore.set({ user, scopes: claimsOf(token).scopes ?? [], mfaSetupRequired });
}

/**
 * On page load: a session survives a reload through the refresh cookie; a browser without one goes
 * straight to sign-in, asking nothing (refreshAccessToken). A refresh does not say whether the
 * organization still waits for this user's first factor; the organization's own answer does.
 */
export async function resumeSession(): Promise<void> {
  if (!(await refreshAccessToken())) {
    sessionStore.set(null);
    return;
  }
  try {
    const probe = await api.GET("/api/v1/organizations/current");
    const reason = (probe.error as { reason?: string } | undefined)?.reason;
    await startSession(currentAccessToken() ?? "", reason === "mfa_setup_required");
  } catch {
    sessionStore.set(null);
  }
}

/** Signs out here and on the server; the sign-in page that follows remembers no page of this user's. */
export async function signOut(): Promise<void> {
  try {
    await api.POST("/api/v1/auth/logout", { body: {} });
  } finally {
    setAccessToken(null);
    hasSignedOut = true;
    sessionStore.set(null);
  }
}

let hasSignedOut = false;

/** True once, after an explicit sign-out (then the sign-in page carries no `next`). */
export function takeSignedOut(): boolean {
  const value = hasSignedOut;
  hasSignedOut = false;
  return value;
}

whenSessionLost(() => sessionStore.set(null));
whenMfaSetupRequired(() => {
  const session = sessionStore.get();
  if (session && !session.mfaSetupRequired) sessionStore.set({ ...session, mfaSetupRequired: true });
});
