import { ValidationError } from "../errors";

export const MIN_PASSWORD_LENGTH = 12;

export function assertPasswordStrength(password: string, field: string): void {
  if (password.length < MIN_PASSWORD_LENGTH) {
    throw new ValidationError("invalid request body", [
      { field, message: `must be at least ${MIN_PASSWORD_LENGTH} characters` },
    ]);
  }
}
