import type { FieldError } from "../domain/errors";

export const JSON_HEADERS = { "content-type": "application/json; charset=utf-8" };

export interface ErrorBody {
  code: number;
  message: string;
  details?: string;
  errors?: FieldError[];
  request_id?: string;
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
  if (extra.details) body.details = extra.details;
  if (extra.errors && extra.errors.length > 0) body.errors = extra.errors;
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
