import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { AuditLogSchema, listAuditLogs } from "../../domain/audit/list-audit-logs";
import type { AppDeps } from "../app-deps";
import type { securityPlugin } from "../plugins/security";
import { errorResponses, PageQuery, Paginated, pageOf, paginate } from "../schemas/common";

const AuditLogQuery = Type.Object({
  ...PageQuery,
  actor_id: Type.Optional(Type.String({ maxLength: 100 })),
  action: Type.Optional(Type.String({ maxLength: 100 })),
  outcome: Type.Optional(Type.Union([Type.Literal("success"), Type.Literal("failure")])),
  since: Type.Optional(
    Type.String({ format: "date-time", description: "Only entries at or after this instant" }),
  ),
  until: Type.Optional(
    Type.String({ format: "date-time", description: "Only entries at or before this instant" }),
  ),
});

/** /api/v1/audit-logs: every mutation and sign-in attempt of the organization. */
export function auditLogRoutes(deps: AppDeps, security: ReturnType<typeof securityPlugin>) {
  return new Elysia({ prefix: "/api/v1/audit-logs", tags: ["Audit"] }).use(security).get(
    "",
    async ({ query, principal }) => {
      const page = pageOf(query);
      const result = await listAuditLogs(
        deps,
        principal.organizationId,
        {
          actorId: query.actor_id,
          action: query.action,
          outcome: query.outcome,
          since: query.since,
          until: query.until,
        },
        page,
      );
      return paginate(result, page);
    },
    {
      access: "audit:read",
      query: AuditLogQuery,
      response: { 200: Paginated(AuditLogSchema), ...errorResponses(400, 401, 403, 429) },
      detail: { summary: "List audit log entries, newest first" },
    },
  );
}
