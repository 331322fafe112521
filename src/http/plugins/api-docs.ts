import { type ElysiaOpenAPIConfig, openapi } from "@elysiajs/openapi";
import scalarBundlePath from "@scalar/api-reference/browser/standalone.js" with { type: "file" };
import { Elysia } from "elysia";

export const OPENAPI_PATH = "/api/v1/openapi.json";
export const DOCS_PATH = "/api/v1/docs";
const SCALAR_BUNDLE_PATH = `${DOCS_PATH}/assets/scalar.js`;

/**
 * The OpenAPI 3.1 document, generated from the route schemas, and a docs page (Scalar) whose script is
 * embedded in the executable and served locally, so it works without internet access.
 */
export function apiDocsPlugin(version: string) {
  return new Elysia({ name: "api-docs" })
    .get(
      SCALAR_BUNDLE_PATH,
      () =>
        new Response(Bun.file(scalarBundlePath), {
          headers: {
            "content-type": "text/javascript; charset=utf-8",
            "cache-control": "public, max-age=86400",
          },
        }),
      {
        detail: { hide: true },
      },
    )
    .use(
      openapi({
        path: DOCS_PATH,
        specPath: OPENAPI_PATH,
        provider: "scalar",
        scalar: { cdn: SCALAR_BUNDLE_PATH, withDefaultFonts: false } as NonNullable<
          ElysiaOpenAPIConfig["scalar"]
        >,
        exclude: { paths: [SCALAR_BUNDLE_PATH] },
        documentation: {
          info: {
            title: "Bulwark API",
            version,
            description:
              "Device and security-policy management. Authenticate with `Authorization: Bearer <token>` (from POST /api/v1/auth/login) or an API key (`Authorization: Bearer bwk_...` or `X-API-Key`). Errors are `{code, message, details?}`. Every response carries X-RateLimit-Limit, X-RateLimit-Remaining and X-RateLimit-Reset.",
          },
          components: {
            securitySchemes: {
              bearerAuth: { type: "http", scheme: "bearer", bearerFormat: "JWT or bwk_ API key" },
              apiKeyHeader: { type: "apiKey", in: "header", name: "X-API-Key" },
            },
          },
          security: [{ bearerAuth: [] }, { apiKeyHeader: [] }],
        },
      }),
    );
}
