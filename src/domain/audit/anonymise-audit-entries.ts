import { and, count, eq, inArray, or, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { replaceEmailInJson, replaceEmailLabel } from "../../db/replace-email";
import { auditLogs } from "../../db/schema";

/**
 * An erased person in the audit trail: entries keep their actor and target ids; entries by them (signed
 * in, or through one of their API keys, `actorIds`) lose the actor's label and address; entries by or
 * about them lose emails and identity-provider subjects, and those about them or their second factors
 * lose names (other names are of policies, webhooks...); anywhere else their email becomes
 * `replacement`. Returns how many entries changed.
 */
export function anonymiseAuditEntries(
  tx: DbOrTx,
  organizationId: string,
  userId: string,
  actorIds: string[],
  email: string | null,
  replacement: string,
): number {
  const inOrganization = eq(auditLogs.organizationId, organizationId);
  const byThem = inArray(auditLogs.actorId, actorIds);
  const aboutThem = and(eq(auditLogs.targetType, "user"), eq(auditLogs.targetId, userId));
  const naming = email
    ? [sql`instr(${auditLogs.actorLabel}, ${email}) > 0`, sql`instr(${auditLogs.details}, ${email}) > 0`]
    : [];
  const changed =
    tx
      .select({ value: count() })
      .from(auditLogs)
      .where(and(inOrganization, or(byThem, aboutThem, ...naming)))
      .get()?.value ?? 0;

  tx.update(auditLogs).set({ actorLabel: null, ip: null }).where(and(inOrganization, byThem)).run();
  tx.run(sql`
    UPDATE audit_logs SET details = CASE
      WHEN (target_type = 'user' AND target_id = ${userId}) OR action LIKE 'mfa.%'
        THEN json_remove(details, '$.email', '$.subject', '$.name')
      ELSE json_remove(details, '$.email', '$.subject') END
    WHERE organization_id = ${organizationId} AND details IS NOT NULL
      AND ((target_type = 'user' AND target_id = ${userId}) OR actor_id IN ${actorIds})`);
  if (email) {
    const scope = sql`organization_id = ${organizationId}`;
    replaceEmailLabel(tx, "audit_logs", "actor_label", scope, email, replacement);
    replaceEmailInJson(tx, "audit_logs", "details", scope, email, replacement);
  }
  return changed;
}
