import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { fetchProfileByLink } from "../../domain/devices/phone-enrollment";
import type { AppDeps } from "../app-deps";
import { requestState, type securityPlugin } from "../plugins/security";
import { errorResponses } from "../schemas/common";
import { profileHeaders } from "./devices.routes";

/** /api/v1/phone-profiles: the one-time links a phone's camera opens to fetch its profile. */
export function phoneProfileRoutes(deps: AppDeps, security: ReturnType<typeof securityPlugin>) {
  return new Elysia({ prefix: "/api/v1/phone-profiles", tags: ["Devices"] }).use(security).get(
    "/:token",
    async ({ params, request }) => {
      const profile = await fetchProfileByLink(deps, params.token, requestState(request).ip);
      return new Response(profile.body, { headers: profileHeaders(profile.fileName) });
    },
    {
      params: Type.Object({
        token: Type.String({ minLength: 1, maxLength: 200, description: "From the link (profile_link.url)" }),
      }),
      response: {
        200: Type.String({
          format: "binary",
          description: "The signed configuration profile (application/x-apple-aspen-config)",
        }),
        ...errorResponses(404, 429, 503),
      },
      detail: {
        security: [],
        summary: "Fetch a phone's profile through its one-time link",
        description:
          "No sign-in: the link is the credential, good once and for a day at most. The key the server " +
          "made is erased once this answers, so the profile can be fetched this way only once. Audited " +
          "(device.profile_fetch) and logged on the device. 404 profile_link_not_found alike for an " +
          "unknown, used or expired link and for a suspended or wiped phone.",
      },
    },
  );
}
