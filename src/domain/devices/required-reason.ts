import { ValidationError } from "../errors";

/** A reason as kept with the device and in the audit log: trimmed, and not blank (400 naming `reason`). */
export function requiredReason(reason: string): string {
  const trimmed = reason.trim();
  if (trimmed === "") {
    throw new ValidationError("invalid request body", [
      { field: "reason", message: "must not be blank", received: reason },
    ]);
  }
  return trimmed;
}
