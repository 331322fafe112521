import type { FieldError } from "../domain/errors";

export const JSON_HEADERS = { "content-type": "application/json; charset=utf-8" };

export interface ErrorBody {
  code: number;
  message: string;
  details?: string;
  errors?: FieldError[];
  request_id?: string;
}

/** Fields whose value is never echoed back in `received`: an error body may end up in logs. */
const SECRET_FIELD = /(password|secret|token|key)$/i;
const MAX_ECHO_CHARACTERS = 200;

/** `received` as it may be shown: omitted for secrets, cut to 200 characters (non-strings as JSON text). */
export function echoable(error: FieldError): FieldError {
  const lastSegment = error.field.split(".").at(-1) ?? "";
  const { received, ...rest } = error;
  if (received === undefined || SECRET_FIELD.test(lastSegment)) return rest;
  if (typeof received === "string") {
    return received.length > MAX_ECHO_CHARACTERS
      ? { ...rest, received: `${received.slice(0, MAX_ECHO_CHARACTERS)}…` }
      : error;
  }
  const text = JSON.stringify(received) ?? String(received);
  return text.length > MAX_ECHO_CHARACTERS
    ? { ...rest, received: `${text.slice(0, MAX_ECHO_CHARACTERS)}…` }
    : error;
}

/** A JSON error response with SPEC.md's body and any extra headers (rate limits, request id). */
export function errorResponse(
  status: number,
  message: string,
  extra: {
    details?: string;
    errors?: FieldError[];
    headers?: Record<string, string>;
    requestId?: string;
  } = {},
): Response {
  const body: ErrorBody = { code: status, message };
  if (extra.details)
    body.details = extra.details.length > 500 ? `${extra.details.slice(0, 500)}…` : extra.details;
  if (extra.errors && extra.errors.length > 0) body.errors = extra.errors.map(echoable);
  if (extra.requestId) body.request_id = extra.requestId;
  return new Response(JSON.stringify(body), { status, headers: { ...extra.headers, ...JSON_HEADERS } });
}

/** An HTTP-level failure that is not a domain rule (body too large, wrong content type). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    readonly details?: string,
  ) {
    super(message);
    this.name = "HttpError";
  }
}
