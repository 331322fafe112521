import { ApiError } from "../api/client";

/**
 * Whatever a call threw, as an ApiError to show: the server's own, or a browser failure (a cancelled
 * passkey, a network error). With `message`, that is the headline and the failure its details.
 */
export function asApiError(error: unknown, message?: string): ApiError {
  if (error instanceof ApiError) return error;
  if (message === undefined) return new ApiError(0, { code: 0, message: String(error) });
  const details = error instanceof Error ? error.message : String(error);
  return new ApiError(0, { code: 0, message, details });
}

/** An ApiError made here (a check done in the browser), to show like the server's. */
export function localError(message: string, details?: string): ApiError {
  return new ApiError(0, { code: 0, message, ...(details ? { details } : {}) });
}

/** Whether a 400's field path is `field` or an item of it (`events.3` belongs to `events`). */
function belongsTo(path: string, field: string): boolean {
  return path === field || path.startsWith(`${field}.`);
}

function messagesOf(
  error: ApiError | undefined,
  field: string,
  describe: (item: { field: string; message: string }) => string,
): string | undefined {
  const messages = (error?.body.errors ?? []).filter((item) => belongsTo(item.field, field)).map(describe);
  return messages.length > 0 ? [...new Set(messages)].join("; ") : undefined;
}

/** The server's messages about one field of a 400 (and the items of a list field), to show under its control. */
export function fieldError(error: ApiError | undefined, field: string): string | undefined {
  return messagesOf(error, field, (item) => item.message);
}

/**
 * As fieldError, for a list edited one item per line: the server names an item by its index
 * (`sso.oidc.redirect_uris.2`), the message names the line ("line 3: ...").
 */
export function listFieldError(error: ApiError | undefined, field: string): string | undefined {
  return messagesOf(error, field, (item) => {
    const index = item.field.slice(field.length + 1);
    return /^\d+$/.test(index) ? `line ${Number(index) + 1}: ${item.message}` : item.message;
  });
}

/** The error to show above the form: none when every problem in it is already shown under one of `fields`. */
export function formError(error: ApiError | undefined, fields: string[]): ApiError | undefined {
  const errors = error?.body.errors ?? [];
  const isAllInline =
    errors.length > 0 && errors.every((item) => fields.some((field) => belongsTo(item.field, field)));
  return isAllInline ? undefined : error;
}
