/**
 * The headers of every HTML page this server answers (the console, the API docs), around the page's own
 * Content-Security-Policy: no other site may frame it (clickjacking), no MIME sniffing, no Referer to
 * the sites it links to, and no window of another origin that it opens or that opened it can reach it.
 */
export function pageSecurityHeaders(contentSecurityPolicy: string): Record<string, string> {
  return {
    "content-security-policy": contentSecurityPolicy,
    "x-frame-options": "DENY",
    "x-content-type-options": "nosniff",
    "referrer-policy": "no-referrer",
    "cross-origin-opener-policy": "same-origin",
  };
}
