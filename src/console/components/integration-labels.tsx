import type { ComponentChildren } from "preact";
import { ApiError } from "../api/client";
import { formatDateTime, formatRelative } from "../lib/format";
import { StatusBadge } from "./status";

/** Whatever a call threw, as an ApiError to show. */
export function asApiError(error: unknown): ApiError {
  return error instanceof ApiError ? error : new ApiError(0, { code: 0, message: String(error) });
}

/**
 * The server's messages for one field of a 400, to show next to it; `events` also collects
 * `events.3` (the server names the item of a list that is wrong).
 */
export function fieldErrorOf(error: ApiError | undefined, field: string): string | undefined {
  const messages = (error?.body.errors ?? [])
    .filter((item) => item.field === field || item.field.startsWith(`${field}.`))
    .map((item) => item.message);
  return messages.length > 0 ? [...new Set(messages)].join("; ") : undefined;
}

/** The error unless every problem in it is already shown next to one of `fields`. */
export function formLevelError(error: ApiError | undefined, fields: string[]): ApiError | undefined {
  const errors = error?.body.errors ?? [];
  const isAllInline =
    errors.length > 0 &&
    errors.every((item) =>
      fields.some((field) => item.field === field || item.field.startsWith(`${field}.`)),
    );
  return isAllInline ? undefined : error;
}

/** "5 minutes ago", with the exact time for pointer users (title) and screen readers (hidden text). */
export function When({ value, empty = "never" }: { value: string | null | undefined; empty?: string }) {
  if (!value) return <span class="muted">{empty}</span>;
  const exact = formatDateTime(value);
  return (
    <time dateTime={value} title={exact}>
      {formatRelative(value)}
      <span class="visually-hidden"> ({exact})</span>
    </time>
  );
}

/** A random secret of 43 URL-safe characters (32 bytes from the browser's CSPRNG). */
export function generateSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(32));
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

/** The first characters of an id, to tell rows apart when nothing else names them. */
export function shortId(id: string): string {
  return id.slice(0, 8);
}

type TokenState = "active" | "expired" | "revoked" | "used_up";

/** An enrollment token's state in a word and a symbol: only an active one enrolls devices. */
export function TokenStateBadge({ state }: { state: TokenState }) {
  const looks: Record<TokenState, [string, string]> = {
    active: ["active", "Active"],
    expired: ["timed_out", "Expired"],
    revoked: ["disabled", "Revoked"],
    used_up: ["inactive", "Used up"],
  };
  const [value, label] = looks[state];
  return <StatusBadge value={value} label={label} />;
}

/** A webhook delivery's outcome: succeeded (a 2xx), failed (out of retries) or pending (a retry is due). */
export function DeliveryStatusBadge({ status }: { status: "pending" | "succeeded" | "failed" }) {
  if (status === "succeeded") return <StatusBadge value="success" label="Succeeded" />;
  return <StatusBadge value={status} />;
}
