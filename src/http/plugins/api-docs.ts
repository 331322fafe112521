import { createHash } from "node:crypto";
import { toOpenAPISchema } from "@elysiajs/openapi/openapi";
import scalarBundlePath from "@scalar/api-reference/browser/standalone.js" with { type: "file" };
import type { TSchema } from "@sinclair/typebox";
import { OptionalKind } from "@sinclair/typebox";
import { type AnyElysia, Elysia } from "elysia";
import { EVENT_DATA_SCHEMAS } from "../../domain/events/event-payloads";
import type { EventType } from "../../domain/events/event-types";
import { pageSecurityHeaders } from "../page-security-headers";
import { FORM_PATHS } from "./json-body";

export const OPENAPI_PATH = "/api/v1/openapi.json";
export const DOCS_PATH = "/api/v1/docs";
const SCALAR_BUNDLE_PATH = `${DOCS_PATH}/assets/scalar.js`;

const DESCRIPTION = [
  "Device and security-policy management.",
  "",
  "Authenticate with `Authorization: Bearer <token>` (from `POST /api/v1/auth/login`) or with an API key",
  "(`Authorization: Bearer bwk_...` or `X-API-Key: bwk_...`). Agent endpoints take the device token returned at enrollment.",
  "",
  "Errors are `{code, reason, message, details?, request_id}` (the `Error` schema); match on `reason`, which never changes once shipped. Validation errors add `errors: [{field, message, received}]`.",
  "Every response carries `X-Request-Id`, `X-RateLimit-Limit`, `X-RateLimit-Remaining` and `X-RateLimit-Reset`; a 429 adds `Retry-After`.",
].join("\n");

interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  [key: string]: unknown;
}
type Operation = {
  parameters?: { schema?: Record<string, unknown> }[];
  requestBody?: { required?: boolean; content?: Record<string, unknown> };
  responses?: Record<string, { description?: string; content?: Record<string, unknown>; headers?: unknown }>;
  security?: unknown[];
};

function errorResponseObject(description: string) {
  return { description, content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } } };
}

/**
 * Schemas given a `title` in TypeBox (`Device`, `Policy`, `Error`, ...) become named components,
 * referenced wherever they appear, so a client generated from this document gets a `Device` type
 * instead of anonymous copies. A reference keeps the description of the place it stands in.
 */
function nameSchemas(node: unknown, components: Record<string, unknown>): unknown {
  if (Array.isArray(node)) return node.map((item) => nameSchemas(item, components));
  if (!node || typeof node !== "object") return node;
  const named: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) named[key] = nameSchemas(value, components);
  const title = named.title;
  if (typeof title !== "string" || !/^[A-Z][A-Za-z]+$/.test(title)) return named;
  const { description, ...schema } = named;
  // The error body is one schema whatever status it answers; the response says which.
  components[title] ??= title === "Error" ? schema : named;
  const reference: Record<string, unknown> = { $ref: `#/components/schemas/${title}` };
  const componentDescription = (components[title] as { description?: unknown }).description;
  if (description !== undefined && description !== componentDescription) reference.description = description;
  return reference;
}

const WEBHOOK_HEADERS: [string, string][] = [
  [
    "X-Service-Signature",
    "sha256=<hex HMAC-SHA256 of the raw body, keyed with the subscription secret> (the GitHub scheme)",
  ],
  ["X-Service-Event", "The event type"],
  ["X-Service-Delivery", "The delivery id: the same on every retry of one event, for idempotency"],
  ["X-Service-Event-Id", "The event id (the body's id)"],
  ["webhook-id", "Standard Webhooks: the delivery id, as X-Service-Delivery (the same on every retry)"],
  ["webhook-timestamp", "Standard Webhooks: epoch seconds of this attempt, to refuse replays"],
  ["webhook-signature", "Standard Webhooks: v1,<base64 HMAC-SHA256 of id.timestamp.body>"],
];

/**
 * The OpenAPI 3.1 `webhooks`: one POST per event type, with the envelope {id, event, timestamp, data}
 * and the event's own data schema (the same schema that types `recordEvent`), and the signature
 * headers a receiver verifies.
 */
function describeWebhooks(): Record<string, unknown> {
  return Object.fromEntries(
    (Object.entries(EVENT_DATA_SCHEMAS) as [EventType, TSchema][]).map(([type, data]) => [
      type,
      {
        post: {
          operationId: `webhook_${type.replace(".", "_")}`,
          summary: `${type}: ${data.description as string}`,
          tags: ["Webhooks"],
          security: [],
          parameters: WEBHOOK_HEADERS.map(([name, description]) => ({
            name,
            in: "header",
            required: true,
            description,
            schema: { type: "string" },
          })),
          requestBody: {
            required: true,
            content: {
              "application/json": {
                schema: {
                  type: "object",
                  required: ["id", "event", "timestamp", "data"],
                  properties: {
                    id: { type: "string", format: "uuid", description: "The event id" },
                    event: { const: type, type: "string" },
                    timestamp: {
                      type: "string",
                      format: "date-time",
                      description: "When the event happened",
                    },
                    data: JSON.parse(JSON.stringify(data)),
                  },
                },
              },
            },
          },
          responses: {
            "2XX": {
              description: "Received. Any other answer or a timeout is retried on the retry schedule.",
            },
            "410": {
              description: "Gone: Bulwark disables the subscription and keeps its later deliveries waiting.",
            },
          },
        },
      },
    ]),
  );
}

/** Routes whose 200 is not JSON (XML, PEM), by path, with its media type. */
const TEXT_RESPONSES = new Map([
  ["/api/v1/auth/sso/saml/metadata", "application/samlmetadata+xml"],
  ["/api/v1/agent/ca.pem", "application/x-pem-file"],
  ["/metrics", "text/plain; version=0.0.4"],
]);

const HEADER_REFERENCE = (name: string) => ({ $ref: `#/components/headers/${name}` });

/** The headers every response carries (and Retry-After on a 429), declared once. */
const RESPONSE_HEADERS = {
  "X-Request-Id": {
    description:
      "The request's id (yours from X-Request-Id if it was 1-128 of A-Z a-z 0-9 . _ -); in logs too",
    schema: { type: "string" },
  },
  "X-RateLimit-Limit": {
    description: "Requests allowed per minute for this caller",
    schema: { type: "integer" },
  },
  "X-RateLimit-Remaining": {
    description: "Requests left in the current minute",
    schema: { type: "integer" },
  },
  "X-RateLimit-Reset": {
    description: "When the current window ends (epoch seconds)",
    schema: { type: "integer" },
  },
  "Retry-After": { description: "Seconds to wait before trying again", schema: { type: "integer" } },
};

function declareResponseHeaders(paths: Record<string, Record<string, Operation>>): void {
  for (const item of Object.values(paths)) {
    for (const operation of Object.values(item)) {
      for (const [status, response] of Object.entries(operation.responses ?? {})) {
        const headers: Record<string, unknown> = {
          "X-Request-Id": HEADER_REFERENCE("X-Request-Id"),
          "X-RateLimit-Limit": HEADER_REFERENCE("X-RateLimit-Limit"),
          "X-RateLimit-Remaining": HEADER_REFERENCE("X-RateLimit-Remaining"),
          "X-RateLimit-Reset": HEADER_REFERENCE("X-RateLimit-Reset"),
        };
        if (status === "429") headers["Retry-After"] = HEADER_REFERENCE("Retry-After");
        const own = (response as { headers?: Record<string, unknown> }).headers;
        (response as { headers?: unknown }).headers = { ...own, ...headers };
      }
    }
  }
}

/** `/devices/:id` -> `/devices/{id}`, without a trailing slash. */
function toOpenApiPath(path: string): string {
  const converted = path.replace(/:([^/]+)/g, "{$1}");
  return converted.length > 1 ? converted.replace(/\/$/, "") : converted;
}

/**
 * Builds the OpenAPI 3.1 document from the routes' own schemas (the ones that validate requests), then
 * tidies what the generator gets wrong for this API: JSON is the only request body type, 204 responses
 * have no content, and paths have no trailing slash.
 */
export function buildOpenApiDocument(app: AnyElysia, version: string): OpenApiDocument {
  const generated = toOpenAPISchema(app, { staticFile: false });
  const paths: Record<string, Record<string, Operation>> = {};
  // Our own JSON body parser (json-body.ts) hides the content type from the generator, so request
  // bodies are described here from each route's body schema.
  const bodySchemas = new Map<string, unknown>();
  for (const route of app.routes) {
    const body = (route.hooks as { body?: unknown } | undefined)?.body;
    if (body && typeof body === "object")
      bodySchemas.set(`${route.method.toLowerCase()} ${toOpenApiPath(route.path)}`, body);
  }
  for (const [path, item] of Object.entries(generated.paths as Record<string, Record<string, Operation>>)) {
    const cleanPath = path.length > 1 ? path.replace(/\/$/, "") : path;
    for (const [method, operation] of Object.entries(item)) {
      const body = bodySchemas.get(`${method} ${cleanPath}`);
      if (body)
        operation.requestBody = {
          required: !(OptionalKind in (body as object)),
          content: {
            // The SAML ACS is posted by the browser as a form (json-body.ts parses it for that path only).
            [FORM_PATHS.has(cleanPath) ? "application/x-www-form-urlencoded" : "application/json"]: {
              schema: JSON.parse(JSON.stringify(body)),
            },
          },
        };
      const responses = operation.responses ?? {};
      for (const [status, response] of Object.entries(responses)) {
        if (status === "204") responses[status] = { description: response.description ?? "No content" };
        // Not Modified (a conditional GET whose If-None-Match still holds) has no body either.
        if (status === "304") responses[status] = { description: response.description ?? "Not modified" };
        // Redirects (single sign-on) have no body: where they go is the Location header, which the route
        // describes in its schema (redirectResponse); OpenAPI wants that description on the header.
        if (status === "302" || status === "303") {
          const location = (
            response.headers as Record<string, { schema: { description?: string } }> | undefined
          )?.Location?.schema;
          responses[status] = {
            description: response.description ?? "Redirect",
            ...(location && {
              headers: {
                Location: { description: location.description, schema: { type: "string", format: "uri" } },
              },
            }),
          } as typeof response;
        }
        if (TEXT_RESPONSES.has(cleanPath) && status === "200")
          responses[status] = {
            description: response.description ?? "Text",
            content: { [TEXT_RESPONSES.get(cleanPath) as string]: { schema: { type: "string" } } },
          } as typeof response;
      }
      // A redirect is the whole success of the single sign-on entry points: they have no 2XX to document,
      // so `default` (OpenAPI: every status not listed) says what else they can answer.
      const statuses = Object.keys(responses);
      if (
        statuses.some((status) => status.startsWith("3")) &&
        !statuses.some((status) => status.startsWith("2"))
      )
        responses.default ??= errorResponseObject(
          "Any other status is a refusal with the error body (431 when the request's headers are too large, for one)",
        );
      // Every secured route but the self-service ones can refuse a session that must set up MFA first.
      const access = (operation as { "x-bulwark-access"?: string })["x-bulwark-access"];
      if (access && !["self", "device"].includes(access))
        responses["403"] ??= errorResponseObject(
          "Forbidden: a scope is missing, or the session must set up multi-factor authentication first",
        );
      // Credentials are checked against the database: when it cannot be reached, secured routes say 503.
      if (responses["401"] && !responses["503"])
        responses["503"] = errorResponseObject("Service unavailable: the database could not be reached");
      // Every path and query value goes through normalize-input.ts, which refuses a NUL character or an
      // unpaired surrogate (neither can be stored on PostgreSQL).
      const parameters = (operation.parameters ?? []) as { in?: string }[];
      if (parameters.some((parameter) => parameter.in === "path" || parameter.in === "query"))
        responses["400"] ??= errorResponseObject("Invalid path or query parameter");
      // Every body goes through json-body.ts, whatever the route: these can answer any of them.
      if (operation.requestBody) {
        responses["400"] ??= errorResponseObject("Invalid request body");
        responses["413"] ??= errorResponseObject("Request body over 1 MiB");
        responses["415"] ??= errorResponseObject("Request body not JSON");
      }
    }
    paths[cleanPath] = { ...paths[cleanPath], ...item };
  }
  // The two documentation routes return a document and a page, which the generator cannot describe.
  const rateLimited = errorResponseObject("Rate limit exceeded");
  const openApiOperation = paths[OPENAPI_PATH]?.get;
  if (openApiOperation) {
    openApiOperation.responses = {
      200: {
        description: "The OpenAPI 3.1 document",
        content: { "application/json": { schema: { type: "object" } } },
      },
      429: rateLimited,
    };
  }
  const docsOperation = paths[DOCS_PATH]?.get;
  if (docsOperation) {
    docsOperation.responses = {
      200: {
        description: "The documentation page",
        content: { "text/html": { schema: { type: "string" } } },
      },
      429: rateLimited,
    };
  }
  const schemas: Record<string, unknown> = { ...(generated.components?.schemas ?? {}) };
  const namedPaths = nameSchemas(paths, schemas) as typeof paths;
  const webhooks = nameSchemas(describeWebhooks(), schemas);
  declareResponseHeaders(namedPaths);
  return {
    openapi: "3.1.0",
    info: {
      title: "Bulwark API",
      version,
      description: DESCRIPTION,
      license: { name: "Proprietary", identifier: "LicenseRef-Bulwark-Proprietary" },
    },
    servers: [{ url: "/", description: "This server" }],
    paths: namedPaths,
    webhooks,
    components: {
      schemas,
      headers: RESPONSE_HEADERS,
      securitySchemes: {
        bearerAuth: { type: "http", scheme: "bearer", bearerFormat: "JWT access token or bwk_ API key" },
        apiKeyHeader: { type: "apiKey", in: "header", name: "X-API-Key" },
        deviceToken: {
          type: "http",
          scheme: "bearer",
          bearerFormat: "bwd_ device token from enrollment (agent endpoints only)",
        },
        metricsToken: {
          type: "http",
          scheme: "bearer",
          description: "metrics.token from the configuration (GET /metrics only, when it is set)",
        },
        deviceCertificate: {
          type: "mutualTLS",
          description:
            "The device certificate from enrollment (agent endpoints only): in the TLS handshake when " +
            "Bulwark terminates TLS (server.tls_cert), or in a trusted proxy's RFC 9440 Client-Cert header " +
            "(server.trust_proxy; read only on connections from server.trusted_proxies)",
        },
      },
    },
    security: [{ bearerAuth: [] }, { apiKeyHeader: [] }],
  };
}

/**
 * Scalar's configuration (option names from @scalar/types, as bundled in @scalar/api-reference 1.46.4).
 * The page must work air-gapped, so everything that calls or links to scalar.com is off: Scalar shows
 * most of it only on a loopback address, where an administrator is likely to first open the docs.
 */
const SCALAR_CONFIGURATION = {
  // The Inter and JetBrains Mono fonts would come from fonts.scalar.com.
  withDefaultFonts: false,
  // "Ask AI": the agent loads its API registry from api.scalar.com through proxy.scalar.com on every
  // page load, whatever proxyUrl says.
  agent: { disabled: true },
  // The toolbar with "Share" (uploads the document to api.scalar.com) and "Deploy" (dashboard.scalar.com).
  showDeveloperTools: "never",
  // "Open API Client", which opens the document in client.scalar.com.
  hideClientButton: true,
  // No request proxy: the embedded client already sends straight to this server (Scalar's default
  // proxy.scalar.com is for its "web" client), and an empty proxyUrl keeps it so. Telemetry is read by
  // nothing in this version; off all the same.
  proxyUrl: "",
  telemetry: false,
};

/**
 * The page's one inline script. The document's server is "/", which Scalar turns into "http://host/" and
 * joins to each path with a slash too many ("http://host//api/v1/..."); the page's own origin is the same
 * server.
 */
const CONFIGURE_SCRIPT = `
      document.getElementById("api-reference").setAttribute("data-configuration", JSON.stringify(
        Object.assign(${JSON.stringify(SCALAR_CONFIGURATION)}, { servers: [{ url: location.origin, description: "This server" }] })
      ));
    `;

const DOCS_HTML = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Bulwark API</title>
  </head>
  <body>
    <script id="api-reference" data-url="${OPENAPI_PATH}"></script>
    <script>${CONFIGURE_SCRIPT}</script>
    <script src="${SCALAR_BUNDLE_PATH}"></script>
  </body>
</html>`;

/**
 * The page runs Scalar's script from this server and its own inline script, by hash, and nothing else:
 * no eval, no injected script, no frame. Styles are the exception: Scalar adds <style> elements and style
 * attributes as it renders, generated at run time, which no hash can name; with images and fonts from
 * this server only, an injected style cannot send anything elsewhere. Scalar's "Test Request" client
 * sends to this server only.
 */
const DOCS_SECURITY_HEADERS = pageSecurityHeaders(
  [
    "default-src 'none'",
    `script-src 'self' 'sha256-${createHash("sha256").update(CONFIGURE_SCRIPT).digest("base64")}'`,
    "style-src 'self' 'unsafe-inline'",
    "img-src 'self' data:",
    "font-src 'self'",
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join("; "),
);

/**
 * zod, inside Scalar's bundle, asks once whether eval works by compiling `new Function("")`: the CSP
 * refuses it and the browser reports a violation. The answer under this CSP is always no, so the bundle
 * is served with the answer in place of the question; zod then validates as it does after a refusal.
 */
const EVAL_PROBE = 'try{return new Function(""),!0}catch(e){return!1}';
let scalarBundle: Promise<Uint8Array<ArrayBuffer>> | null = null;

function scalarBundleBytes(): Promise<Uint8Array<ArrayBuffer>> {
  scalarBundle ??= Bun.file(scalarBundlePath)
    .text()
    .then((text) => new TextEncoder().encode(text.replace(EVAL_PROBE, "return!1")));
  return scalarBundle;
}

/**
 * GET /api/v1/openapi.json and a docs page (Scalar) whose script is embedded in the executable and
 * served from here, so the docs work without internet access. `rootApp` is read lazily: the document
 * describes every route mounted on the final app.
 */
export function apiDocsPlugin(rootApp: () => AnyElysia, version: string) {
  let cached: { routeCount: number; document: OpenApiDocument } | null = null;
  return new Elysia({ name: "api-docs", tags: ["System"] })
    .get(
      OPENAPI_PATH,
      () => {
        const app = rootApp();
        if (!cached || cached.routeCount !== app.routes.length) {
          cached = { routeCount: app.routes.length, document: buildOpenApiDocument(app, version) };
        }
        return cached.document;
      },
      { detail: { summary: "This OpenAPI 3.1 document", security: [] } },
    )
    .get(
      DOCS_PATH,
      () =>
        new Response(DOCS_HTML, {
          headers: { "content-type": "text/html; charset=utf-8", ...DOCS_SECURITY_HEADERS },
        }),
      {
        detail: { summary: "Interactive API documentation (works offline)", security: [] },
      },
    )
    .get(
      SCALAR_BUNDLE_PATH,
      async () =>
        new Response(await scalarBundleBytes(), {
          headers: {
            "content-type": "text/javascript; charset=utf-8",
            "cache-control": "public, max-age=86400",
          },
        }),
      { detail: { hide: true } },
    );
}
