import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { eraseUser } from "../../domain/gdpr/erase-user";
import { exportPersonalData, PersonalDataExportSchema } from "../../domain/gdpr/export-personal-data";
import { GdprRequestSchema, GdprRequestTypeSchema, listGdprRequests } from "../../domain/gdpr/gdpr-request";
import { DEVICE_ACTIVITY, objectToProcessing } from "../../domain/gdpr/object-to-processing";
import { restrictUser } from "../../domain/gdpr/restrict-user";
import { DisplayText } from "../../lib/schema-types";
import type { AppDeps } from "../app-deps";
import type { securityPlugin } from "../plugins/security";
import { errorResponses, PageQuery, Paginated, pageOf, paginate } from "../schemas/common";

const UserIdQuery = {
  user_id: Type.Optional(
    Type.String({
      maxLength: 100,
      description:
        "Admins only: act for this user of the organization (a deleted account too, for export and erasure). Without it the request is about the caller.",
    }),
  ),
};

const ObjectionBody = Type.Object(
  {
    processing: Type.String({
      minLength: 1,
      maxLength: 64,
      pattern: "^[a-z][a-z0-9_.-]*$",
      description: `The processing objected to. "${DEVICE_ACTIVITY}" (the activity logs of the person's devices) is honoured at once; any other value is recorded as needs_review for the operator.`,
      examples: [DEVICE_ACTIVITY],
    }),
    reason: DisplayText(2000, "The person's grounds for objecting, in their words"),
  },
  { additionalProperties: false },
);

const ACTING_FOR =
  "An admin acts for a user of the organization with `?user_id=`; an API key needs the admin scope.";

/** /api/v1/gdpr: data-protection requests (access, erasure, restriction, objection) and their record. */
export function gdprRoutes(deps: AppDeps, security: ReturnType<typeof securityPlugin>) {
  return new Elysia({ prefix: "/api/v1/gdpr", tags: ["Data protection"] })
    .use(security)
    .get(
      "/export",
      ({ query, principal, actor, set }) => {
        const document = exportPersonalData(deps, principal, actor, query.user_id);
        const day = document.generated_at.slice(0, 10);
        set.headers["content-disposition"] =
          `attachment; filename="bulwark-personal-data-${document.profile.id}-${day}.json"`;
        return document;
      },
      {
        access: "authenticated",
        query: Type.Object(UserIdQuery),
        response: { 200: PersonalDataExportSchema, ...errorResponses(400, 401, 403, 404, 429) },
        detail: {
          summary: "Export everything held about a person (GDPR articles 15 and 20)",
          description: `One JSON document: profile, organization and role, assigned devices with their logs, API keys and enrollment tokens, second factors, SSO links, sessions, audit entries and data-protection requests; never a password hash, token, key or secret. Answered with Content-Disposition: attachment so a browser saves it. Recorded as a request and audited. ${ACTING_FOR}`,
        },
      },
    )
    .delete("/delete", ({ query, principal, actor }) => eraseUser(deps, principal, actor, query.user_id), {
      access: "authenticated",
      query: Type.Object(UserIdQuery),
      response: { 200: GdprRequestSchema, ...errorResponses(400, 401, 403, 404, 409, 429) },
      detail: {
        summary: "Erase a person (GDPR article 17)",
        description: `At once: every session, refresh token and API key of the user is revoked (the next request with any of them is a 401); second factors and SSO links are deleted; their devices stay enrolled, unassigned; the account becomes an anonymous stub that keeps its id, so audit entries keep actor and target ids but lose the email, name and address, and the email becomes "erased user <id>" in policy histories, wipes, enrollment tokens and device logs. 409 (last_admin) for the organization's last admin, and the refusal is recorded. ${ACTING_FOR}`,
      },
    })
    .post("/restrict", ({ query, principal, actor }) => restrictUser(deps, principal, actor, query.user_id), {
      access: "authenticated",
      query: Type.Object(UserIdQuery),
      response: { 200: GdprRequestSchema, ...errorResponses(400, 401, 403, 404, 409, 429) },
      detail: {
        summary: "Restrict the processing of a person's data (GDPR article 18)",
        description: `The account can no longer sign in (password, SSO) and its API keys are refused (401 account_restricted) until an admin lifts it with PATCH /users/{id} {"restricted": false}; its sessions end now; its devices' activity-log entries keep event and time only. Nothing is deleted. 409 (last_admin) for the organization's last admin: nobody could lift it. ${ACTING_FOR}`,
      },
    })
    .post(
      "/object",
      ({ query, body, principal, actor }) => objectToProcessing(deps, principal, actor, query.user_id, body),
      {
        access: "authenticated",
        query: Type.Object(UserIdQuery),
        body: ObjectionBody,
        response: { 200: GdprRequestSchema, ...errorResponses(400, 401, 403, 404, 429) },
        detail: {
          summary: "Object to a processing of a person's data (GDPR article 21)",
          description: `processing "device_activity": from now on the activity-log entries of the person's devices keep the event and time only, and the details already kept are removed (status completed). Any other processing is recorded for the operator (status needs_review). ${ACTING_FOR}`,
        },
      },
    )
    .get(
      "/requests",
      ({ query, principal }) => {
        const page = pageOf(query);
        return paginate(
          listGdprRequests(deps, principal, { userId: query.user_id, type: query.type }, page),
          page,
        );
      },
      {
        access: "authenticated",
        query: Type.Object({
          ...PageQuery,
          ...UserIdQuery,
          type: Type.Optional(GdprRequestTypeSchema),
        }),
        response: { 200: Paginated(GdprRequestSchema), ...errorResponses(400, 401, 403, 429) },
        detail: {
          summary: "List data-protection requests, newest first",
          description:
            "Your own requests; an admin sees the organization's (or one user's with user_id). Every request is also in the audit log (gdpr.export, gdpr.erasure, gdpr.restriction, gdpr.objection) and sent to webhooks as gdpr.request_completed.",
        },
      },
    );
}
