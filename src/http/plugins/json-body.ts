import { Elysia } from "elysia";
import {
  BodyTooLargeError,
  type FieldError,
  UnsupportedMediaTypeError,
  ValidationError,
} from "../../domain/errors";
import { isNestedDeeperThan } from "../../lib/json-nesting";
import { MAX_BODY_BYTES } from "./security";

/** Deeper than any body this API accepts (policy documents nest four levels); deeper is refused unread. */
const MAX_JSON_NESTING = 64;

const rawBodies = new WeakMap<Request, unknown>();

// Agents in the field may be newer than this server: their bodies may carry fields it does not know
// yet, which are ignored rather than refused so an upgrade of the agents never breaks check-ins.
const LENIENT_PATH_PREFIX = "/api/v1/agent/";

/** The one route whose body is a form: a SAML IdP posts its response as a browser form (HTTP-POST binding). */
export const FORM_PATHS = new Set(["/api/v1/auth/sso/saml/acs"]);

// A leading byte-order mark is allowed and dropped (ignoreBOM: false); invalid UTF-8 is refused.
const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Bodies the fast lane read before handing the request on (fast-lane.ts); a body can be read once. */
const alreadyRead = new WeakMap<Request, Uint8Array>();

/** Keeps the bytes of a body read before Elysia got the request, for the parser below to use. */
export function keepReadBody(request: Request, bytes: Uint8Array): void {
  alreadyRead.set(request, bytes);
}

/** The body as UTF-8 text, or null when it is not valid UTF-8 (a leading byte-order mark dropped). */
export function decodeBody(bytes: Uint8Array): string | null {
  try {
    return utf8.decode(bytes);
  } catch {
    return null;
  }
}

/**
 * Reads the body as text, refusing (413) past MAX_BODY_BYTES. The security plugin has already refused a
 * declared Content-Length over the limit; a body without one is read up to the limit and no further.
 */
async function readBodyText(request: Request): Promise<string> {
  const kept = alreadyRead.get(request);
  if (!kept && !request.body) return "";
  // With a Content-Length within the limit, HTTP framing caps the body at that length, so it is read in
  // one native call: the stream reader below cost ~12% of a small request's CPU.
  const declared = request.headers.get("content-length");
  const bytes =
    kept ??
    (declared !== null && /^\d{1,9}$/.test(declared) && Number(declared) <= MAX_BODY_BYTES
      ? new Uint8Array(await request.arrayBuffer())
      : await readBodyStream(request.body as ReadableStream<Uint8Array>));
  const text = decodeBody(bytes);
  if (text === null)
    throw new ValidationError("invalid request body", [], "the body is not valid UTF-8", "body_not_utf8");
  return text;
}

/** Whether a Content-Type names JSON (`application/json`, `application/*+json`), as the parser requires. */
export function isJsonContentType(contentType: string | null): boolean {
  const type = (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
  return type === "application/json" || type.endsWith("+json");
}

/** A body without a usable Content-Length (chunked), read up to MAX_BODY_BYTES and no further. */
async function readBodyStream(body: ReadableStream<Uint8Array>): Promise<Uint8Array> {
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      reader.cancel().catch(() => undefined);
      throw new BodyTooLargeError(`the body may be at most ${MAX_BODY_BYTES} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/**
 * What validation hid: Elysia's normaliser drops keys no schema declares and turns a value of the wrong
 * type at an object's place into `{}` before validating, so both would otherwise pass silently. Compares
 * the body as sent (`raw`) with the body the handler gets (`cleaned`) and names each such field, in
 * the body's order. Every JSON request walks its body here: the walk adds to one list and allocates
 * nothing for a field that is fine.
 */
function findHiddenFieldErrors(raw: unknown, cleaned: unknown, path = "", errors: FieldError[] = []) {
  const name = path || "body";
  if (isPlainObject(cleaned) && !isPlainObject(raw)) {
    errors.push({
      field: name,
      message: path ? "must be an object" : "must be a JSON object",
      received: raw,
    });
  } else if (Array.isArray(cleaned) && !Array.isArray(raw)) {
    errors.push({ field: name, message: "must be an array", received: raw });
  } else if (Array.isArray(raw) && Array.isArray(cleaned)) {
    for (let index = 0; index < raw.length; index++)
      findHiddenFieldErrors(raw[index], cleaned[index], childPath(path, String(index)), errors);
  } else if (isPlainObject(raw) && isPlainObject(cleaned)) {
    for (const key in raw) {
      if (!Object.hasOwn(raw, key)) continue;
      const child = childPath(path, key);
      if (Object.hasOwn(cleaned, key)) findHiddenFieldErrors(raw[key], cleaned[key], child, errors);
      else errors.push({ field: child, message: UNKNOWN_FIELD });
    }
  }
  return errors;
}

function childPath(path: string, key: string): string {
  return path ? `${path}.${key}` : key;
}

const UNKNOWN_FIELD = "unknown field";
const NO_BODY = "this route takes no body";

/**
 * Fields whose text holds an unpaired UTF-16 surrogate, which SQLite would store as U+FFFD, or a NUL
 * character, which PostgreSQL's text cannot hold at all (the same body must fare alike on both stores), in the
 * body's order (a field's name before its value). Like findHiddenFieldErrors, it allocates nothing for
 * a field that is fine.
 */
function findMalformedStrings(value: unknown, path = "", errors: FieldError[] = []): FieldError[] {
  if (typeof value === "string") {
    if (!value.isWellFormed())
      errors.push({
        field: path || "body",
        message: "contains an unpaired UTF-16 surrogate (not valid Unicode)",
      });
    else if (value.includes("\u0000"))
      errors.push({
        field: path || "body",
        message: "contains a NUL character (U+0000), which no text may hold",
      });
  } else if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++)
      findMalformedStrings(value[index], childPath(path, String(index)), errors);
  } else if (isPlainObject(value)) {
    for (const key in value) {
      if (!Object.hasOwn(value, key)) continue;
      const child = childPath(path, key);
      if (!key.isWellFormed() || key.includes("\u0000"))
        errors.push({
          field: child,
          message: "the field name contains an unpaired UTF-16 surrogate or a NUL character",
        });
      findMalformedStrings(value[key], child, errors);
    }
  }
  return errors;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A JSON body's text as this parser reads it, or a ValidationError: nested past MAX_JSON_NESTING
 * (refused unread), not JSON, or holding an unpaired UTF-16 surrogate. The plugin below and the fast
 * lane (fast-lane.ts) both read bodies through it.
 */
export function parseJsonText(text: string): unknown {
  if (isNestedDeeperThan(text, MAX_JSON_NESTING)) {
    throw new ValidationError(
      "invalid request body",
      [],
      `the body nests objects and arrays more than ${MAX_JSON_NESTING} levels deep`,
      "body_too_deep",
    );
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (error) {
    throw new ValidationError(
      "invalid request body",
      [],
      `the body is not valid JSON: ${(error as Error).message}`,
      "invalid_json",
    );
  }
  const malformed = findMalformedStrings(parsed);
  if (malformed.length > 0) throw new ValidationError("invalid request body", malformed);
  return parsed;
}

/** The routes that declare a body, as `METHOD /template`, from the app's route table (made once). */
function routesWithBody(routes: readonly { method: string; path: string; hooks?: unknown }[]): Set<string> {
  return new Set(
    routes
      .filter((route) => (route.hooks as { body?: unknown } | undefined)?.body !== undefined)
      .map((route) => `${route.method.toUpperCase()} ${route.path}`),
  );
}

/**
 * JSON is the only body type: bodies are read with the size limit, malformed JSON is a 400 "invalid
 * request body", other content types are 415, and fields no schema declares are a 400 naming them
 * (Elysia would otherwise drop them silently, so a typo like `polcy_data` would look like success). A
 * route that declares no body refuses one with fields the same way (an empty `{}` passes): a field
 * nobody reads must not turn a request about someone into a request about the caller.
 */
export function jsonBodyPlugin(routes: () => readonly { method: string; path: string; hooks?: unknown }[]) {
  let declaring: Set<string> | null = null;
  return new Elysia({ name: "json-body" })
    .onParse(async ({ request, contentType }) => {
      const type = (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
      const text = await readBodyText(request);
      if (text.trim() === "") return {};
      if (type === "application/x-www-form-urlencoded" && FORM_PATHS.has(new URL(request.url).pathname)) {
        const fields = Object.fromEntries(new URLSearchParams(text));
        rawBodies.set(request, fields);
        return fields;
      }
      if (!isJsonContentType(contentType ?? null)) {
        throw new UnsupportedMediaTypeError("send the body as JSON with Content-Type: application/json");
      }
      const parsed = parseJsonText(text);
      // Every body this API takes is a JSON object. Refused before validation, so that `null` (which
      // an optional body would take for none, making a request about someone one about the caller) or
      // `[]` is named for what it is. Agent routes check their root after the device token.
      if (!isPlainObject(parsed) && !new URL(request.url).pathname.startsWith(LENIENT_PATH_PREFIX))
        throw new ValidationError("invalid request body", [
          { field: "body", message: "must be a JSON object", received: parsed },
        ]);
      rawBodies.set(request, parsed);
      return parsed;
    })
    .onBeforeHandle(({ request, body, path, route }) => {
      if (!rawBodies.has(request)) return;
      const isLenient = path.startsWith(LENIENT_PATH_PREFIX);
      declaring ??= routesWithBody(routes());
      if (!isLenient && !declaring.has(`${request.method.toUpperCase()} ${route}`)) {
        const raw = rawBodies.get(request);
        const fields = isPlainObject(raw) ? Object.keys(raw) : null;
        if (fields?.length === 0) return;
        throw new ValidationError(
          "invalid request body",
          fields
            ? fields.map((field) => ({ field, message: `${UNKNOWN_FIELD} (${NO_BODY})` }))
            : [{ field: "body", message: NO_BODY, received: raw }],
        );
      }
      // Agent routes accept unknown fields, and check the body's root themselves once the device token
      // has been checked (an unauthenticated agent learns nothing but 401).
      const errors = findHiddenFieldErrors(rawBodies.get(request), body).filter(
        (error) => !(isLenient && (error.message === UNKNOWN_FIELD || error.field === "body")),
      );
      if (errors.length > 0) throw new ValidationError("invalid request body", errors);
    })
    .as("global");
}
