import { ROLES } from "../../db/schema/enums";
import { literalUnion } from "../../lib/literal-union";
/** Every scope (the README's roles and scopes; `CreateApiKeyBody.scopes` in the OpenAPI document). */
export const SCOPES = [
  "devices:read",
  "devices:write",
  "policies:read",
  "policies:write",
  "users:read",
  "users:write",
  "audit:read",
  // The VPN server's peer list and nothing else: the key `bulwark vpn sync` runs with on the VPN host.
  // No role but admin (which implies every scope) carries it, so only an admin can create such a key.
  "vpn:read",
  // The handshakes the VPN host sees, reported by `bulwark vpn sync`: the only sign of life of a phone
  // without an agent (src/domain/vpn/report-handshakes.ts). Admin-only, as vpn:read.
  "vpn:report",
  "admin",
] as const;
export type Scope = (typeof SCOPES)[number];

export { ROLES };
export type Role = (typeof ROLES)[number];

/** The scopes each role carries (README: roles). `admin` implies every scope. */
export const ROLE_SCOPES: Record<Role, readonly Scope[]> = {
  admin: ["admin"],
  operator: ["devices:read", "devices:write", "policies:read", "policies:write", "users:read"],
  auditor: ["devices:read", "policies:read", "users:read", "audit:read"],
  member: [],
};

export function isScope(value: string): value is Scope {
  return (SCOPES as readonly string[]).includes(value);
}

/** True when `granted` allows `required`; `admin` allows everything. */
export function hasScope(granted: readonly string[], required: Scope): boolean {
  return granted.includes("admin") || granted.includes(required);
}

/** The scopes an API key actually has: its own, narrowed to what its creator may still do. */
export function effectiveApiKeyScopes(keyScopes: readonly string[], creatorRole: Role): Scope[] {
  const creator = ROLE_SCOPES[creatorRole];
  return keyScopes.filter((scope): scope is Scope => isScope(scope) && hasScope(creator, scope));
}

/** A role, as documented in every request and response that carries one. */
export const RoleSchema = literalUnion(ROLES, {
  title: "Role",
  description:
    "admin: everything; operator: devices and policies; auditor: read-only plus audit logs; member: self-service only",
});
