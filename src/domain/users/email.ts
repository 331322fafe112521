import { ValidationError } from "../errors";

/** One spelling per address: sign-in, user creation and the CLI all compare emails through this. */
export function normalizeEmail(email: string): string {
  return email.trim().toLowerCase();
}

// The shape the API's `format: "email"` accepts: something@domain.tld, no spaces, at most 320 characters.
const EMAIL = /^[^\s@]+@[^\s@.]+(\.[^\s@.]+)+$/;

/** The normalised address, or a 400 naming `field` when it is not an email address. */
export function parseEmail(email: string, field = "email"): string {
  const normalized = normalizeEmail(email);
  if (normalized.length > 320 || !EMAIL.test(normalized))
    throw new ValidationError("invalid request body", [
      { field, message: "must be an email address", received: email },
    ]);
  return normalized;
}
