import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { fetchProfileByLink, LINK_GONE, peekProfileLink } from "../../domain/devices/phone-enrollment";
import { NotFoundError } from "../../domain/errors";
import { escapeXml } from "../../lib/escape-xml";
import type { AppDeps } from "../app-deps";
import { pageSecurityHeaders } from "../page-security-headers";
import { requestState, type securityPlugin } from "../plugins/security";
import { errorResponses } from "../schemas/common";
import { profileHeaders } from "./devices.routes";

/** The landing page's headers: no script, no style from elsewhere, never cached. */
const PAGE_HEADERS = {
  ...pageSecurityHeaders(
    "default-src 'none'; style-src 'unsafe-inline'; base-uri 'none'; form-action 'none'",
  ),
  "content-type": "text/html; charset=utf-8",
  "cache-control": "no-store",
};

/**
 * The page the phone's camera opens: what the profile is, and the one button that fetches it. Only
 * that button's request (?install=1) uses the link up, so a link checker or a chat's preview that opens
 * the link (GET or HEAD) leaves it working.
 */
function landingPage(found: { deviceName: string; organizationName: string; expiresAt: string }): string {
  const until = found.expiresAt.replace("T", " ").replace(/\.\d+Z$/, " UTC");
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>Bulwark profile</title>
<style>body{font:17px/1.5 -apple-system,system-ui,sans-serif;max-width:34rem;margin:2rem auto;padding:0 1rem;color:#111}
.button{display:inline-block;padding:.8rem 1.2rem;border-radius:.6rem;background:#0b57d0;color:#fff;text-decoration:none;font-weight:600}
@media (prefers-color-scheme:dark){body{background:#111;color:#eee}}</style></head>
<body><h1>${escapeXml(found.organizationName)}: ${escapeXml(found.deviceName)}</h1>
<p>This installs your organization's settings on this iPhone or iPad: the VPN tunnel for the WireGuard app, and the passcode and screenshot rules your administrator set.</p>
<ol>
<li>Install <strong>WireGuard</strong> from the App Store, if it is not there yet.</li>
<li>Tap <strong>Download the profile</strong> below, then <strong>Allow</strong>.</li>
<li>Open <strong>Settings, General, VPN &amp; Device Management</strong>, choose the profile and tap <strong>Install</strong>.</li>
<li>Open the WireGuard app once.</li>
</ol>
<p><a class="button" href="?install=1">Download the profile</a></p>
<p>This link works once, until ${escapeXml(until)}.</p></body></html>
`;
}

/** /api/v1/phone-profiles: the one-time links a phone's camera opens to fetch its profile. */
export function phoneProfileRoutes(deps: AppDeps, security: ReturnType<typeof securityPlugin>) {
  return new Elysia({ prefix: "/api/v1/phone-profiles", tags: ["Devices"] }).use(security).get(
    "/:token",
    async ({ params, query, request }) => {
      // HEAD never uses the link up, whatever it asks for.
      if (request.method === "HEAD") return new Response(null, { headers: PAGE_HEADERS });
      if (query.install !== "1") {
        const found = await peekProfileLink(deps, params.token);
        // Like every refusal of the API, a link that does not work is the error body, which says why.
        if (!found) throw new NotFoundError("profile link", LINK_GONE);
        return new Response(landingPage(found), { headers: PAGE_HEADERS });
      }
      const profile = await fetchProfileByLink(deps, params.token, requestState(request).ip);
      return new Response(profile.body, { headers: profileHeaders(profile.fileName) });
    },
    {
      params: Type.Object({
        token: Type.String({ minLength: 1, maxLength: 200, description: "From the link (profile_link.url)" }),
      }),
      query: Type.Object({
        install: Type.Optional(
          Type.Literal("1", { description: "1: fetch the profile, using the link up (the page's button)" }),
        ),
      }),
      response: {
        200: Type.String({
          format: "binary",
          description:
            "Without install: an HTML page saying what the profile is, with its one button. With " +
            "install=1: the signed configuration profile (application/x-apple-aspen-config)",
        }),
        ...errorResponses(400, 404, 429, 503),
      },
      detail: {
        security: [],
        summary: "A phone's one-time profile link: its page, then its profile",
        description:
          "No sign-in: the link is the credential, good once and for a day at most. Opening it (GET or " +
          "HEAD) shows a page and uses nothing up, so a link checker or a chat's preview leaves it " +
          "working; the page's button (?install=1) fetches the profile and uses the link up, and the " +
          "key the server made is erased then. Audited (device.profile_fetch) and logged on the device. " +
          "404 profile_link_not_found alike for an unknown, used or expired link and for a suspended or " +
          "wiped phone.",
      },
    },
  );
}
