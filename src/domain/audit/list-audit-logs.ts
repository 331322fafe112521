import { type Static, Type } from "@sinclair/typebox";
import { and, eq, gte, lte, type SQL } from "drizzle-orm";
import { selectNewestFirstPage } from "../../db/paged-query";
import { ACTOR_TYPES, OUTCOMES } from "../../db/schema/enums";
import { auditLogs } from "../../db/tables";
import { literalUnion } from "../../lib/literal-union";
import { Timestamp } from "../../lib/schema-types";
import type { DomainDeps } from "../deps";
import { parseInstantRange } from "../instant-filter";

export interface AuditLogFilter {
  actorId?: string;
  action?: string;
  outcome?: "success" | "failure";
  since?: string;
  until?: string;
}

/** An audit log entry as GET /audit-logs shows it. */
export const AuditLogSchema = Type.Object(
  {
    id: Type.String(),
    timestamp: Timestamp,
    actor: Type.Object({
      type: literalUnion(ACTOR_TYPES, { description: "user, api_key, device, system or anonymous" }),
      id: Type.Union([Type.String(), Type.Null()]),
      label: Type.Union([Type.String(), Type.Null()], {
        description: "Email of the user, or the API key's name",
      }),
    }),
    action: Type.String({ description: "e.g. auth.login, user.create, policy.update, device.wipe" }),
    target: Type.Object({
      type: Type.Union([Type.String(), Type.Null()]),
      id: Type.Union([Type.String(), Type.Null()]),
    }),
    ip: Type.Union([Type.String(), Type.Null()]),
    outcome: literalUnion(OUTCOMES),
    details: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  },
  { title: "AuditLogEntry" },
);

export type AuditLogView = Static<typeof AuditLogSchema>;

/** The organization's audit trail, newest first; `since` and `until` are instants in any offset. */
export async function listAuditLogs(
  deps: DomainDeps,
  organizationId: string,
  filter: AuditLogFilter,
  page: { page: number; pageSize: number },
): Promise<{ data: AuditLogView[]; total: number }> {
  const { since, until } = parseInstantRange(filter);
  const conditions: SQL[] = [eq(auditLogs.organizationId, organizationId)];
  if (filter.actorId) conditions.push(eq(auditLogs.actorId, filter.actorId));
  if (filter.action) conditions.push(eq(auditLogs.action, filter.action));
  if (filter.outcome) conditions.push(eq(auditLogs.outcome, filter.outcome));
  if (since) conditions.push(gte(auditLogs.createdAt, since));
  if (until) conditions.push(lte(auditLogs.createdAt, until));
  const where = and(...conditions);
  const { data: rows, total } = await selectNewestFirstPage(deps.db, auditLogs, where, page);
  return {
    total,
    data: rows.map(toAuditLogView),
  };
}

export function toAuditLogView(row: typeof auditLogs.$inferSelect): AuditLogView {
  return {
    id: row.id,
    timestamp: row.createdAt,
    actor: { type: row.actorType, id: row.actorId, label: row.actorLabel },
    action: row.action,
    target: { type: row.targetType, id: row.targetId },
    ip: row.ip,
    outcome: row.outcome,
    details: row.details,
  };
}
