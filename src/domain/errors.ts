/**
 * Typed domain errors. Domain code throws these; the HTTP error plugin is the one place that maps
 * `kind` to a status code and the SPEC.md error body. Domain code never knows about HTTP.
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
  | "rate_limited"
  | "unavailable";

export class DomainError extends Error {
  constructor(
    readonly kind: DomainErrorKind,
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
  ) {
    super(
      "invalid",
      message,
      details ?? (errors.map((error) => `${error.field}: ${error.message}`).join("; ") || undefined),
    );
  }
}

export class NotFoundError extends DomainError {
  constructor(resource: string, details?: string) {
    super("not_found", `${resource} not found`, details);
  }
}

export class ConflictError extends DomainError {
  constructor(message: string, details?: string) {
    super("conflict", message, details);
  }
}

export class UnauthenticatedError extends DomainError {
  constructor(message = "invalid or missing authentication", details?: string) {
    super("unauthenticated", message, details);
  }
}

export class ForbiddenError extends DomainError {
  constructor(message = "insufficient permissions", details?: string) {
    super("forbidden", message, details);
  }
}

export class RateLimitedError extends DomainError {
  constructor(
    message: string,
    readonly retryAfterSeconds: number,
    details?: string,
  ) {
    super("rate_limited", message, details);
  }
}
