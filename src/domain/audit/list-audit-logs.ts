import { and, count, desc, eq, gte, lte, type SQL } from "drizzle-orm";
import { auditLogs } from "../../db/schema";
import type { DomainDeps } from "../deps";

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

/** The organization's audit trail, newest first. */
export function listAuditLogs(
  deps: DomainDeps,
  organizationId: string,
  filter: AuditLogFilter,
  page: { page: number; pageSize: number },
): { data: AuditLogView[]; total: number } {
  const conditions: SQL[] = [eq(auditLogs.organizationId, organizationId)];
  if (filter.actorId) conditions.push(eq(auditLogs.actorId, filter.actorId));
  if (filter.action) conditions.push(eq(auditLogs.action, filter.action));
  if (filter.outcome) conditions.push(eq(auditLogs.outcome, filter.outcome));
  if (filter.since) conditions.push(gte(auditLogs.createdAt, filter.since));
  if (filter.until) conditions.push(lte(auditLogs.createdAt, filter.until));
  const where = and(...conditions);
  const rows = deps.db
    .select()
    .from(auditLogs)
    .where(where)
    .orderBy(desc(auditLogs.createdAt), desc(auditLogs.id))
    .limit(page.pageSize)
    .offset((page.page - 1) * page.pageSize)
    .all();
  const total = deps.db.select({ value: count() }).from(auditLogs).where(where).get()?.value ?? 0;
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
