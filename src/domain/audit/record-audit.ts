import type { DbOrTx } from "../../db/client";
import { auditLogs } from "../../db/tables";
import { toIso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import type { Actor } from "../deps";

export interface AuditEntry {
  action: string;
  outcome?: "success" | "failure";
  targetType?: string;
  targetId?: string | null;
  details?: Record<string, unknown>;
  /** Defaults to the actor's organization. */
  organizationId?: string | null;
}

/** Writes one audit row, in the caller's transaction when given one. */
export async function recordAudit(db: DbOrTx, now: Date, actor: Actor, entry: AuditEntry): Promise<void> {
  await db.insert(auditLogs).values({
    id: newId(),
    organizationId: entry.organizationId === undefined ? actor.organizationId : entry.organizationId,
    actorType: actor.type,
    actorId: actor.id,
    actorLabel: actor.label,
    action: entry.action,
    targetType: entry.targetType ?? null,
    targetId: entry.targetId ?? null,
    ip: actor.ip,
    outcome: entry.outcome ?? "success",
    details: entry.details ?? null,
    createdAt: toIso(now),
  });
}
