import { type TObject, Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { type FieldError, ValidationError } from "../../domain/errors";
import { eraseUser } from "../../domain/gdpr/erase-user";
import { exportPersonalData, PersonalDataExportSchema } from "../../domain/gdpr/export-personal-data";
import {
  GdprRequestSchema,
  GdprRequestTypeSchema,
  listGdprRequests,
  resolveGdprRequest,
} from "../../domain/gdpr/gdpr-request";
import { DEVICE_ACTIVITY, objectToProcessing } from "../../domain/gdpr/object-to-processing";
import { restrictUser } from "../../domain/gdpr/restrict-user";
import type { AppDeps } from "../app-deps";
import type { securityPlugin } from "../plugins/security";
import { errorResponses, IdOf, IdParams, PageQuery, Paginated, pageOf, paginate } from "../schemas/common";

/**
 * Unknown parameters and body fields are refused (checked in subjectParameter and by the body parser;
 * this documents it): a mistyped `user_id` must not turn a request about someone into one about the
 * caller.
 */
const STRICT = { additionalProperties: false } as const;

const UserIdField = {
  user_id: Type.Optional(
    IdOf(
      "user",
      "Admins only: act for this user of the organization (a deleted account too, for export and erasure). Without it the request is about the caller. In the query or in the body; given in both, the two must be the same.",
    ),
  ),
};
const UserIdQuery = Type.Object(UserIdField, STRICT);
const UserIdBody = Type.Optional(Type.Object(UserIdField, STRICT));
const RequestListQuery = Type.Object(
  { ...PageQuery, ...UserIdField, type: Type.Optional(GdprRequestTypeSchema) },
  STRICT,
);

const ObjectionBody = Type.Object(
  {
    ...UserIdField,
    processing: Type.String({
      minLength: 1,
      maxLength: 64,
      pattern: "^[a-z][a-z0-9_.-]*$",
      description: `a lower-case name of the processing objected to (a-z first, then a-z, 0-9, _ . -), e.g. "${DEVICE_ACTIVITY}": the activity logs of the person's devices, honoured at once; any other value is recorded as needs_review for the operator`,
      examples: [DEVICE_ACTIVITY],
    }),
    reason: Type.String({
      minLength: 1,
      maxLength: 2000,
      pattern: "\\S",
      description:
        "text with at least one visible character: the person's grounds for objecting, in their words (line breaks allowed)",
    }),
  },
  { additionalProperties: false },
);

/**
 * `user_id` as the request named it, in the query (checked against the route's query schema) or in the
 * body. Said twice, in the query or in both places with two values, it is refused rather than read as
 * one of them: a request that erases or restricts someone must name exactly one person.
 */
function subjectParameter(
  request: Request,
  query: { user_id?: string },
  schema: TObject = UserIdQuery,
  body?: { user_id?: string } | null,
): string | undefined {
  const known = Object.keys(schema.properties);
  const parameters = new URL(request.url).searchParams;
  const errors: FieldError[] = [...new Set(parameters.keys())]
    .filter((name) => !known.includes(name))
    .map((name) => ({
      field: name,
      message: `is not a parameter of this route (it takes ${known.join(", ")})`,
    }));
  if (parameters.getAll("user_id").length > 1)
    errors.push({ field: "user_id", message: "must be given at most once" });
  const inBody = body?.user_id;
  if (
    query.user_id !== undefined &&
    inBody !== undefined &&
    query.user_id.toLowerCase() !== inBody.toLowerCase()
  )
    errors.push({
      field: "user_id",
      message: "is given in the query and in the body with different values: name one person",
      received: inBody,
    });
  if (errors.length > 0) throw new ValidationError("invalid request parameters", errors);
  return query.user_id ?? inBody;
}

const ACTING_FOR =
  "An admin acts for a user of the organization with `user_id` in the query or the body (the same in both when both are given: 400 otherwise); an API key needs the admin scope.";

/** /api/v1/gdpr: data-protection requests (access, erasure, restriction, objection) and their record. */
export function gdprRoutes(deps: AppDeps, security: ReturnType<typeof securityPlugin>) {
  return new Elysia({ prefix: "/api/v1/gdpr", tags: ["Data protection"] })
    .use(security)
    .get(
      "/export",
      async ({ request, query, principal, actor, set }) => {
        const document = await exportPersonalData(deps, principal, actor, subjectParameter(request, query));
        const day = document.generated_at.slice(0, 10);
        set.headers["content-disposition"] =
          `attachment; filename="bulwark-personal-data-${document.profile.id}-${day}.json"`;
        return document;
      },
      {
        access: "authenticated",
        query: UserIdQuery,
        response: { 200: PersonalDataExportSchema, ...errorResponses(400, 401, 403, 404, 429) },
        detail: {
          summary: "Export everything held about a person (GDPR articles 15 and 20)",
          description: `One JSON document: profile, organization and role, assigned devices with their logs, API keys and enrollment tokens, second factors, SSO links, sessions, audit entries and data-protection requests; never a password hash, token, key or secret. Answered with Content-Disposition: attachment so a browser saves it. Recorded as a request and audited. ${ACTING_FOR}`,
        },
      },
    )
    .delete(
      "/delete",
      ({ request, query, body, principal, actor }) =>
        eraseUser(deps, principal, actor, subjectParameter(request, query, UserIdQuery, body)),
      {
        access: "authenticated",
        query: UserIdQuery,
        body: UserIdBody,
        response: { 200: GdprRequestSchema, ...errorResponses(400, 401, 403, 404, 409, 429) },
        detail: {
          summary: "Erase a person (GDPR article 17)",
          description: `At once: every session, refresh token and API key of the user is revoked (the next request with any of them is a 401); second factors and SSO links are deleted; their devices stay enrolled, unassigned; the account becomes an anonymous stub that keeps its id, so audit entries keep actor and target ids but lose the email, name and address, and the email becomes "erased user <id>" in policy histories, wipes, enrollment tokens and device logs. 409 (last_admin) for the organization's last admin, and the refusal is recorded. ${ACTING_FOR}`,
        },
      },
    )
    .post(
      "/restrict",
      ({ request, query, body, principal, actor }) =>
        restrictUser(deps, principal, actor, subjectParameter(request, query, UserIdQuery, body)),
      {
        access: "authenticated",
        query: UserIdQuery,
        body: UserIdBody,
        response: { 200: GdprRequestSchema, ...errorResponses(400, 401, 403, 404, 409, 429) },
        detail: {
          summary: "Restrict the processing of a person's data (GDPR article 18)",
          description: `The account can no longer sign in (password, SSO) and its API keys are refused (401 account_restricted) until an admin lifts it with PATCH /users/{id} {"restricted": false}; its sessions end now; its devices' activity-log entries keep event and time only. Nothing is deleted. 409 (last_admin) for the organization's last admin: nobody could lift it. ${ACTING_FOR}`,
        },
      },
    )
    .post(
      "/object",
      ({ request, query, body, principal, actor }) =>
        objectToProcessing(deps, principal, actor, subjectParameter(request, query, UserIdQuery, body), {
          processing: body.processing,
          reason: body.reason,
        }),
      {
        access: "authenticated",
        query: UserIdQuery,
        body: ObjectionBody,
        response: { 200: GdprRequestSchema, ...errorResponses(400, 401, 403, 404, 429) },
        detail: {
          summary: "Object to a processing of a person's data (GDPR article 21)",
          description: `processing "device_activity": from now on the activity-log entries of the person's devices keep the event and time only, and the details already kept are removed (status completed). Any other processing is recorded for the operator (status needs_review). ${ACTING_FOR}`,
        },
      },
    )
    .patch(
      "/requests/:id",
      ({ params, body, principal, actor }) => resolveGdprRequest(deps, principal, actor, params.id, body),
      {
        access: "admin",
        params: IdParams,
        body: Type.Object(
          {
            status: Type.Union([Type.Literal("completed"), Type.Literal("rejected")], {
              description: "completed: the objection was honoured; rejected: it was refused",
            }),
            result: Type.String({
              minLength: 1,
              maxLength: 2000,
              pattern: "\\S",
              description: "text with at least one visible character: what was done, or why it was refused",
            }),
          },
          { additionalProperties: false },
        ),
        response: { 200: GdprRequestSchema, ...errorResponses(400, 401, 403, 404, 409, 429) },
        detail: {
          summary: "Answer a request Bulwark could not answer by itself",
          description:
            "An objection to processing Bulwark does not do is recorded as needs_review; an admin records the answer here (status and result). Audited (gdpr.request_resolve) and sent to webhooks as gdpr.request_completed with the new status. 409 gdpr_request_not_open for a request already answered.",
        },
      },
    )
    .get(
      "/requests",
      async ({ request, query, principal }) => {
        const page = pageOf(query);
        const userId = subjectParameter(request, query, RequestListQuery);
        return paginate(await listGdprRequests(deps, principal, { userId, type: query.type }, page), page);
      },
      {
        access: "authenticated",
        query: RequestListQuery,
        response: { 200: Paginated(GdprRequestSchema), ...errorResponses(400, 401, 403, 429) },
        detail: {
          summary: "List data-protection requests, newest first",
          description:
            "Your own requests; an admin sees the organization's (or one user's with user_id). Every request is also in the audit log (gdpr.export, gdpr.erasure, gdpr.restriction, gdpr.objection) and sent to webhooks as gdpr.request_completed.",
        },
      },
    );
}
