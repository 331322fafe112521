import { ApiError } from "../api/client";

/** Whatever a call threw, as an ApiError to show (a browser failure such as a cancelled passkey too). */
export function asApiError(error: unknown, message = "Something went wrong"): ApiError {
  if (error instanceof ApiError) return error;
  const details = error instanceof Error ? error.message : String(error);
  return new ApiError(0, { code: 0, message, details });
}

/** An ApiError made here (a check done in the browser), to show like the server's. */
export function localError(message: string, details?: string): ApiError {
  return new ApiError(0, { code: 0, message, ...(details ? { details } : {}) });
}

/**
 * The server's messages about one field of a 400, to show under its control. The server names an item of
 * a list by its index (`sso.oidc.redirect_uris.2`): the list's control collects those too.
 */
export function fieldError(error: ApiError | undefined, field: string): string | undefined {
  const messages = (error?.body.errors ?? [])
    .filter((item) => item.field === field || item.field.startsWith(`${field}.`))
    .map((item) => {
      const index = item.field.slice(field.length + 1);
      return /^\d+$/.test(index) ? `line ${Number(index) + 1}: ${item.message}` : item.message;
    });
  return messages.length > 0 ? [...new Set(messages)].join("; ") : undefined;
}

/** The error to show above the form: none when every problem in it is already shown under one of `fields`. */
export function formError(error: ApiError | undefined, fields: string[]): ApiError | undefined {
  const errors = error?.body.errors ?? [];
  const isAllInline =
    errors.length > 0 &&
    errors.every((item) =>
      fields.some((field) => item.field === field || item.field.startsWith(`${field}.`)),
    );
  return isAllInline ? undefined : error;
}
