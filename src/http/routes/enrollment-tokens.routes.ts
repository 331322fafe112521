import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { createEnrollmentToken } from "../../domain/devices/create-enrollment-token";
import { listEnrollmentTokens } from "../../domain/devices/list-enrollment-tokens";
import { revokeEnrollmentToken } from "../../domain/devices/revoke-enrollment-token";
import type { AppDeps } from "../app-deps";
import type { securityPlugin } from "../plugins/security";
import { errorResponses, IdParams, PageQuery, Paginated, pageOf, paginate } from "../schemas/common";
import {
  CreatedEnrollmentTokenSchema,
  CreateEnrollmentTokenBody,
  EnrollmentTokenSchema,
} from "./enrollment-tokens.schemas";

/** /api/v1/enrollment-tokens: the tokens agents present to POST /devices/enroll. */
export function enrollmentTokenRoutes(deps: AppDeps, security: ReturnType<typeof securityPlugin>) {
  return new Elysia({ prefix: "/api/v1/enrollment-tokens", tags: ["Enrollment tokens"] })
    .use(security)
    .post(
      "",
      async ({ body, principal, actor, set }) => {
        set.status = 201;
        return await createEnrollmentToken(deps, actor, principal.organizationId, {
          expiresInHours: body.expires_in_hours,
          maxUses: body.max_uses,
          userId: body.user_id,
          policyId: body.policy_id,
        });
      },
      {
        access: "devices:write",
        body: CreateEnrollmentTokenBody,
        response: { 201: CreatedEnrollmentTokenSchema, ...errorResponses(400, 401, 403, 404, 429) },
        detail: {
          summary: "Create an enrollment token",
          description:
            "The token is returned once, in `token`. 404 when user_id or policy_id names nothing in " +
            "the organization.",
        },
      },
    )
    .get(
      "",
      async ({ query, principal }) => {
        const page = pageOf(query);
        return paginate(await listEnrollmentTokens(deps, principal.organizationId, page), page);
      },
      {
        access: "devices:write",
        query: Type.Object(PageQuery),
        response: { 200: Paginated(EnrollmentTokenSchema), ...errorResponses(400, 401, 403, 429) },
        detail: { summary: "List enrollment tokens, newest first, without their values" },
      },
    )
    .delete(
      "/:id",
      async ({ params, principal, actor, set }) => {
        await revokeEnrollmentToken(deps, actor, principal.organizationId, params.id);
        set.status = 204;
      },
      {
        access: "devices:write",
        params: IdParams,
        response: { 204: Type.Void({ description: "Revoked" }), ...errorResponses(401, 403, 404, 429) },
        detail: {
          summary: "Revoke an enrollment token",
          description: "It enrolls no more devices; devices already enrolled with it are not affected.",
        },
      },
    );
}
