/**
 * Typed domain errors. Domain code throws these; the HTTP error plugin is the one place that maps
 * `kind` to a status code and the SPEC.md error body. Domain code never knows about HTTP.
 *
 * Every error carries a `reason`: a stable snake_case word a program can keep (`device_not_wiped`,
 * `last_admin`, `scope_missing`). Messages are for people and may be reworded; reasons never change
 * once shipped. Clients and tests match on the reason.
 */

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
  constructor(
    readonly kind: DomainErrorKind,
    readonly reason: string,
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
    reason = "validation_failed",
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
  constructor(resource: string, details?: string) {
    super(
      "not_found",
      `${resource.toLowerCase().replaceAll(" ", "_")}_not_found`,
      `${resource} not found`,
      details,
    );
  }
}

/** A move the resource's current state does not allow. */
export class ConflictError extends DomainError {
  constructor(reason: string, message: string, details?: string) {
    super("conflict", reason, message, details);
  }
}

export class UnauthenticatedError extends DomainError {
  constructor(
    reason = "authentication_required",
    message = "invalid or missing authentication",
    details?: string,
  ) {
    super("unauthenticated", reason, message, details);
  }
}

export class ForbiddenError extends DomainError {
  constructor(reason: string, message = "insufficient permissions", details?: string) {
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
  constructor(reason: string, message: string, details?: string) {
    super("unavailable", reason, message, details);
  }
}
