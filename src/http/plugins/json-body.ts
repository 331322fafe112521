import { Elysia } from "elysia";
import { type FieldError, ValidationError } from "../../domain/errors";
import { HttpError } from "../error-body";
import { MAX_BODY_BYTES } from "./security";

const rawBodies = new WeakMap<Request, unknown>();

// Agents in the field may be newer than this server: their bodies may carry fields it does not know
// yet, which are ignored rather than refused so an upgrade of the agents never breaks check-ins.
const LENIENT_PATH_PREFIX = "/api/v1/agent/";

/** Reads the body as text, refusing (413) as soon as it passes MAX_BODY_BYTES, whatever Content-Length said. */
async function readBodyText(request: Request): Promise<string> {
  if (!request.body) return "";
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > MAX_BODY_BYTES) {
      reader.cancel().catch(() => undefined);
      throw new HttpError(413, "request body too large", `the body may be at most ${MAX_BODY_BYTES} bytes`);
    }
    chunks.push(value);
  }
  try {
    // A leading byte-order mark is allowed and dropped (ignoreBOM: false); invalid UTF-8 is refused.
    return new TextDecoder("utf-8", { fatal: true }).decode(Buffer.concat(chunks));
  } catch {
    throw new ValidationError("invalid request body", [], "the body is not valid UTF-8");
  }
}

/** Dotted paths of keys in `raw` that validation dropped from `cleaned` because no schema declares them. */
export function findUnknownFields(raw: unknown, cleaned: unknown, path = ""): string[] {
  if (Array.isArray(raw) && Array.isArray(cleaned)) {
    return raw.flatMap((item, index) =>
      findUnknownFields(item, cleaned[index], path ? `${path}.${index}` : String(index)),
    );
  }
  if (!isPlainObject(raw) || !isPlainObject(cleaned)) return [];
  return Object.keys(raw).flatMap((key) => {
    const child = path ? `${path}.${key}` : key;
    return Object.hasOwn(cleaned, key) ? findUnknownFields(raw[key], cleaned[key], child) : [child];
  });
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * JSON is the only body type: bodies are read with the size limit, malformed JSON is a 400 "invalid
 * request body", other content types are 415, and fields no schema declares are a 400 naming them
 * (Elysia would otherwise drop them silently, so a typo like `polcy_data` would look like success).
 */
export function jsonBodyPlugin() {
  return new Elysia({ name: "json-body" })
    .onParse(async ({ request, contentType }) => {
      const type = (contentType ?? "").split(";")[0]?.trim().toLowerCase() ?? "";
      const text = await readBodyText(request);
      if (text.trim() === "") return {};
      if (type !== "application/json" && !type.endsWith("+json")) {
        throw new HttpError(
          415,
          "unsupported media type",
          "send the body as JSON with Content-Type: application/json",
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
        );
      }
      rawBodies.set(request, parsed);
      return parsed;
    })
    .onBeforeHandle(({ request, body, path }) => {
      if (!rawBodies.has(request) || path.startsWith(LENIENT_PATH_PREFIX)) return;
      const unknown = findUnknownFields(rawBodies.get(request), body);
      if (unknown.length === 0) return;
      const errors: FieldError[] = unknown.map((field) => ({ field, message: "unknown field" }));
      throw new ValidationError("invalid request body", errors);
    })
    .as("global");
}
