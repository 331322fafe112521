import { Elysia } from "elysia";
import { DomainError } from "../../domain/errors";
import { CONSOLE_PATH, type ConsoleAsset, type ConsoleAssets, loadConsoleAssets } from "../console-assets";
import { pageSecurityHeaders } from "../page-security-headers";

/**
 * The console's page may run only its own script and style and talk only to this server; no other
 * site may frame it (clickjacking a wipe button).
 */
const PAGE_SECURITY_HEADERS = pageSecurityHeaders(
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'",
);

let loading: Promise<ConsoleAssets> | null = null;

/** The console's files, bundled and compressed once per process (on first use, or at serve's start). */
export function consoleAssets(): Promise<ConsoleAssets> {
  loading ??= loadConsoleAssets();
  return loading;
}

/** Brotli when the browser takes it, else gzip, else the plain bytes; a matching ETag answers 304. */
function assetResponse(request: Request, asset: ConsoleAsset): Response {
  const headers: Record<string, string> = {
    "content-type": asset.contentType,
    etag: asset.etag,
    vary: "Accept-Encoding",
    "cache-control": asset.isImmutable ? "public, max-age=31536000, immutable" : "no-cache",
    ...(asset.isImmutable ? { "x-content-type-options": "nosniff" } : PAGE_SECURITY_HEADERS),
  };
  if (request.headers.get("if-none-match") === asset.etag)
    return new Response(null, { status: 304, headers });
  const accepted = request.headers.get("accept-encoding") ?? "";
  if (/\bbr\b/.test(accepted))
    return new Response(asset.brotli, { headers: { ...headers, "content-encoding": "br" } });
  if (/\bgzip\b/.test(accepted))
    return new Response(asset.gzip, { headers: { ...headers, "content-encoding": "gzip" } });
  return new Response(asset.identity, { headers });
}

/**
 * `/` and `/console/*`: the administration console, a single page that calls this API. Its routes are
 * pages and files for a browser, not API operations, so the OpenAPI document leaves them out.
 */
export function consoleRoutes() {
  return new Elysia()
    .get("/", ({ redirect }) => redirect(`${CONSOLE_PATH}/`, 302), { detail: { hide: true } })
    .get(CONSOLE_PATH, ({ redirect }) => redirect(`${CONSOLE_PATH}/`, 302), { detail: { hide: true } })
    .get(
      `${CONSOLE_PATH}/*`,
      async ({ request, path }) => {
        const assets = await consoleAssets();
        const file = assets.files.get(path);
        if (file) return assetResponse(request, file);
        // A file name this bundle does not have (a page of an older version asking for its script) is a
        // 404, not the page: HTML parsed as a script fails with a confusing error.
        if (/\.[a-z0-9]+$/i.test(path))
          throw new DomainError(
            "not_found",
            "route_not_found",
            "not found",
            `${path} is not a file of this version's console`,
          );
        return assetResponse(request, assets.page);
      },
      { detail: { hide: true } },
    );
}
