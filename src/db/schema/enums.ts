/**
 * Every enumerated value the service stores, declared once: the database columns, the domain types and
 * the request and response schemas (through `literalUnion`) are all built from these lists.
 */
export const PLATFORMS = ["linux", "windows", "macos", "android", "ios"] as const;
export const DEVICE_STATUSES = ["online", "offline", "suspended", "wiped", "pending"] as const;
export const COMPLIANCE_STATUSES = ["compliant", "non_compliant", "unknown"] as const;
export const SEVERITIES = ["low", "medium", "high", "critical"] as const;
/**
 * What an agent did with a policy setting: applied it, only reported it, could not (why), failed, or
 * did its part and waits for the person at the device to approve it (a macOS configuration profile).
 */
export const ENFORCEMENT_OUTCOMES = [
  "enforced",
  "reported",
  "unsupported",
  "failed",
  "pending_approval",
] as const;
/** Who made a phone's WireGuard key pair: the server (the private key sealed until delivered) or the phone. */
export const PHONE_KEY_SOURCES = ["server", "phone"] as const;
export const WIPE_STATUSES = ["pending", "completed", "failed", "timed_out"] as const;
export const DELIVERY_STATUSES = ["pending", "succeeded", "failed"] as const;
export const ROLES = ["admin", "operator", "auditor", "member"] as const;
export const PLANS = ["standard", "enterprise"] as const;
export const ACTOR_TYPES = ["user", "api_key", "device", "system", "anonymous"] as const;
export const OUTCOMES = ["success", "failure"] as const;
export const MFA_METHOD_TYPES = ["totp", "webauthn"] as const;
export const MFA_VERIFY_METHODS = ["totp", "webauthn", "recovery_code"] as const;
export const MFA_CHALLENGE_KINDS = ["sign_in", "webauthn_registration"] as const;
export const SIGN_IN_METHODS = ["password", "mfa", "sso"] as const;
export const SSO_PROVIDERS = ["oidc", "saml"] as const;
export const GDPR_REQUEST_TYPES = ["export", "erasure", "restriction", "objection"] as const;
export const GDPR_REQUEST_STATUSES = ["completed", "needs_review", "rejected"] as const;
