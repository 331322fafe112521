import type { Config } from "../../config/config-schema";
import { checkWebhookTarget } from "../../lib/network-address";
import { type FieldError, ValidationError } from "../errors";
import { EVENT_TYPES, isEventType } from "../events/event-types";

export const MIN_SECRET_LENGTH = 16;
export const MAX_SECRET_LENGTH = 256;
export const ALL_EVENTS = "*";

/**
 * Checks every name of an event filter and returns it without duplicates; a filter containing "*"
 * becomes ["*"].
 */
export function normalizeEventFilter(names: string[]): string[] {
  const errors: FieldError[] = [];
  if (names.length === 0) errors.push({ field: "events", message: 'must name at least one event, or "*"' });
  names.forEach((name, index) => {
    if (name !== ALL_EVENTS && !isEventType(name)) {
      errors.push({
        field: `events.${index}`,
        message: `unknown event "${name}"; known events: ${EVENT_TYPES.join(", ")}`,
        received: name,
      });
    }
  });
  if (errors.length > 0) throw new ValidationError("invalid request body", errors);
  return names.includes(ALL_EVENTS) ? [ALL_EVENTS] : [...new Set(names)];
}

/** Refuses a secret outside the allowed length (the request schema checks it too). */
export function assertSecretLength(secret: string): void {
  if (secret.length < MIN_SECRET_LENGTH || secret.length > MAX_SECRET_LENGTH) {
    throw new ValidationError("invalid request body", [
      {
        field: "secret",
        message: `must be ${MIN_SECRET_LENGTH} to ${MAX_SECRET_LENGTH} characters`,
      },
    ]);
  }
}

/**
 * Refuses a target url that is not http(s) or whose host resolves to a loopback, private or link-local
 * address, unless webhooks.allow_private_targets.
 */
export async function assertAllowedTarget(config: Readonly<Config>, url: string): Promise<void> {
  const check = await checkWebhookTarget(url, { allowPrivateTargets: config.webhooks.allow_private_targets });
  if (!check.ok) {
    throw new ValidationError("invalid request body", [
      { field: "url", message: check.reason, received: url },
    ]);
  }
}

/**
 * scheme://host[:port] of a target url, for audit entries: paths and queries of webhook urls often
 * carry tokens, and audit readers need not see them.
 */
export function originOf(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return "(invalid url)";
  }
}
