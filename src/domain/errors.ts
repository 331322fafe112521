/**
 * Typed domain errors. Domain code throws these; the HTTP error plugin is the one place that maps
 * `kind` to a status code and the one error body. Domain code never knows about HTTP.
 *
 * Every error carries a `reason`: a stable snake_case word a program can keep (`device_not_wiped`,
 * `last_admin`, `scope_missing`). Messages are for people and may be reworded; reasons never change
 * once shipped. Clients and tests match on the reason.
 */

/**
 * Every reason an error body can carry: the list clients can rely on, published as an enum in the
 * OpenAPI document. A reason is added here when it is introduced and never renamed or removed.
 */
export const REASONS = [
  // The request itself
  "validation_failed",
  "invalid_json",
  "body_not_utf8",
  "body_too_deep",
  "body_too_large",
  "headers_too_large",
  "unsupported_media_type",
  "route_not_found",
  "method_not_allowed",
  "invalid_cookie",
  "invalid_host",
  // Who is asking
  "authentication_required",
  "authorization_header_invalid",
  "invalid_credentials",
  "token_invalid",
  "token_expired",
  "session_ended",
  "cross_site_request",
  "refresh_token_invalid",
  "refresh_token_reused",
  "account_disabled",
  "account_restricted",
  "account_deleted",
  "api_key_invalid",
  "api_key_revoked",
  "api_key_expired",
  "device_token_required",
  "device_token_invalid",
  "device_token_revoked",
  "device_token_expired",
  "metrics_token_invalid",
  "client_certificate_invalid",
  "client_certificate_unknown",
  "client_certificate_revoked",
  "client_certificate_expired",
  "enrollment_token_unknown",
  "enrollment_token_expired",
  "enrollment_token_revoked",
  "enrollment_token_used_up",
  "scope_missing",
  "scope_not_grantable",
  "api_key_not_allowed",
  "api_key_has_no_session",
  "current_password_incorrect",
  "password_incorrect",
  "mfa_token_invalid",
  "mfa_code_invalid",
  "mfa_code_reused",
  "mfa_method_not_enrolled",
  "mfa_setup_required",
  "own_mfa_reset",
  "sso_state_invalid",
  "sso_code_rejected",
  "sso_id_token_invalid",
  "sso_email_not_verified",
  "sso_domain_not_allowed",
  "sso_email_taken",
  "sso_response_invalid",
  "sso_response_replayed",
  "sso_response_unsolicited",
  "sso_code_invalid",
  // What does not exist
  "api_key_not_found",
  "device_not_found",
  "enrollment_token_not_found",
  "mfa_method_not_found",
  "organization_not_found",
  "policy_not_found",
  "policy_template_not_found",
  "policy_version_not_found",
  "sso_domain_not_found",
  "user_not_found",
  "gdpr_request_not_found",
  "webhook_not_found",
  "wipe_not_found",
  "agent_download_unavailable",
  "server_ca_unavailable",
  "profile_link_not_found",
  // Rules of the domain
  "policy_invalid",
  "email_taken",
  "last_admin",
  "policy_name_taken",
  "policy_version_mismatch",
  "default_policy_not_deletable",
  "webhook_disabled",
  "device_wiped",
  "device_already_suspended",
  "device_not_suspended",
  "device_not_wiped",
  "wipe_pending",
  "wipe_not_pending",
  "gdpr_request_not_open",
  "hardware_id_enrolled",
  "public_key_taken",
  "vpn_pool_exhausted",
  "device_suspended",
  "saml_requires_enterprise",
  "plan_set_by_operator",
  "totp_already_enabled",
  "totp_enrolment_missing",
  "mfa_not_enabled",
  "webauthn_options_required",
  "webauthn_response_invalid",
  "webauthn_credential_registered",
  "sso_connection_unknown",
  "sso_redirect_uri_not_allowed",
  "sso_state_taken",
  "sso_discovery_failed",
  "sso_certificate_invalid",
  "sso_client_id_taken",
  "sso_domain_taken",
  "organization_changed",
  "device_not_vpn_profile",
  "profile_ios_only",
  "vpn_key_not_held",
  "wipe_needs_agent",
  // Limits
  "rate_limited",
  "login_throttled",
  // The service itself
  "database_unavailable",
  "vpn_pool_misconfigured",
  "webauthn_unavailable",
  "totp_secret_unreadable",
  "device_ca_unreadable",
  "phone_key_unreadable",
  "vpn_server_key_unreadable",
  "sso_provider_unavailable",
  "metrics_disabled",
  "internal_error",
] as const;

export type Reason = (typeof REASONS)[number];

/** What can be missing, and the reason its absence carries. */
const NOT_FOUND_REASONS = {
  "API key": "api_key_not_found",
  "agent executable": "agent_download_unavailable",
  "server CA": "server_ca_unavailable",
  "profile link": "profile_link_not_found",
  device: "device_not_found",
  "enrollment token": "enrollment_token_not_found",
  "data-protection request": "gdpr_request_not_found",
  "MFA method": "mfa_method_not_found",
  organization: "organization_not_found",
  policy: "policy_not_found",
  "policy template": "policy_template_not_found",
  "policy version": "policy_version_not_found",
  "sso domain": "sso_domain_not_found",
  user: "user_not_found",
  webhook: "webhook_not_found",
  wipe: "wipe_not_found",
} as const satisfies Record<string, Reason>;

/** One problem with one input field, as listed by validation errors. */
export interface FieldError {
  /** Dotted path of the field, e.g. `policy_data.dlp.screenshot_allowed`. */
  field: string;
  message: string;
  received?: unknown;
}

export type DomainErrorKind =
  | "invalid"
  | "unauthenticated"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "too_large"
  | "headers_too_large"
  | "unsupported_media_type"
  | "rate_limited"
  | "unavailable";

export class DomainError extends Error {
  /**
   * For the server log only, never the answer: what the answer leaves out on purpose (what a host on
   * the network answered), so the operator can still tell. No secrets.
   */
  logDetail?: string;

  constructor(
    readonly kind: DomainErrorKind,
    readonly reason: Reason,
    message: string,
    readonly details?: string,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

/** Input that is well-formed JSON but breaks a rule; `errors` lists every problem at once. */
export class ValidationError extends DomainError {
  constructor(
    message: string,
    readonly errors: FieldError[] = [],
    details?: string,
    reason: Reason = "validation_failed",
  ) {
    super(
      "invalid",
      reason,
      message,
      details ?? (errors.map((error) => `${error.field}: ${error.message}`).join("; ") || undefined),
    );
  }
}

/** A resource that does not exist, or not in the caller's organization; reason `<resource>_not_found`. */
export class NotFoundError extends DomainError {
  constructor(resource: keyof typeof NOT_FOUND_REASONS, details?: string) {
    super("not_found", NOT_FOUND_REASONS[resource], `${resource} not found`, details);
  }
}

/** A move the resource's current state does not allow. */
export class ConflictError extends DomainError {
  constructor(reason: Reason, message: string, details?: string) {
    super("conflict", reason, message, details);
  }
}

export class UnauthenticatedError extends DomainError {
  constructor(
    reason: Reason = "authentication_required",
    message = "invalid or missing authentication",
    details?: string,
  ) {
    super("unauthenticated", reason, message, details);
  }
}

export class ForbiddenError extends DomainError {
  constructor(reason: Reason, message = "insufficient permissions", details?: string) {
    super("forbidden", reason, message, details);
  }
}

/** A request body larger than allowed. */
export class BodyTooLargeError extends DomainError {
  constructor(details: string) {
    super("too_large", "body_too_large", "request body too large", details);
  }
}

/** Request headers larger than allowed. */
export class HeadersTooLargeError extends DomainError {
  constructor(details: string) {
    super("headers_too_large", "headers_too_large", "request headers too large", details);
  }
}

export class UnsupportedMediaTypeError extends DomainError {
  constructor(details: string) {
    super("unsupported_media_type", "unsupported_media_type", "unsupported media type", details);
  }
}

export class RateLimitedError extends DomainError {
  constructor(
    reason: "rate_limited" | "login_throttled",
    message: string,
    readonly retryAfterSeconds: number,
    details?: string,
  ) {
    super("rate_limited", reason, message, details);
  }
}

/** Something the service depends on (the database, its own configuration) cannot serve the request. */
export class UnavailableError extends DomainError {
  constructor(reason: Reason, message: string, details?: string) {
    super("unavailable", reason, message, details);
  }
}
