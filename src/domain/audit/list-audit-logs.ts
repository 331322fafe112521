import { and, eq, gte, lte, type SQL } from "drizzle-orm";
import { selectNewestFirstPage } from "../../db/paged-query";
import { auditLogs } from "../../db/schema";
import type { DomainDeps } from "../deps";
import { parseInstantRange } from "../instant-filter";

export interface AuditLogFilter {
  actorId?: string;
  action?: string;
  outcome?: "success" | "failure";
  since?: string;
  until?: string;
}

export interface AuditLogView {
  id: string;
  timestamp: string;
  actor: { type: string; id: string | null; label: string | null };
  action: string;
  target: { type: string | null; id: string | null };
  ip: string | null;
  outcome: "success" | "failure";
  details: Record<string, unknown> | null;
}

/** The organization's audit trail, newest first; `since` and `until` are instants in any offset. */
export function listAuditLogs(
  deps: DomainDeps,
  organizationId: string,
  filter: AuditLogFilter,
  page: { page: number; pageSize: number },
): { data: AuditLogView[]; total: number } {
  const { since, until } = parseInstantRange(filter);
  const conditions: SQL[] = [eq(auditLogs.organizationId, organizationId)];
  if (filter.actorId) conditions.push(eq(auditLogs.actorId, filter.actorId));
  if (filter.action) conditions.push(eq(auditLogs.action, filter.action));
  if (filter.outcome) conditions.push(eq(auditLogs.outcome, filter.outcome));
  if (since) conditions.push(gte(auditLogs.createdAt, since));
  if (until) conditions.push(lte(auditLogs.createdAt, until));
  const where = and(...conditions);
  const { data: rows, total } = selectNewestFirstPage(deps.db, auditLogs, where, page);
  return {
    total,
    data: rows.map((row) => ({
      id: row.id,
      timestamp: row.createdAt,
      actor: { type: row.actorType, id: row.actorId, label: row.actorLabel },
      action: row.action,
      target: { type: row.targetType, id: row.targetId },
      ip: row.ip,
      outcome: row.outcome,
      details: row.details,
    })),
  };
}
