import { and, eq, inArray, isNull, or, sql } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { jsonWithout, selectRows } from "../../db/dialect";
import { replaceEmailInJson } from "../../db/replace-email";
import { auditLogs } from "../../db/tables";

/**
 * An erased person in the audit trail. Entries keep their actor and target ids; entries by them (signed
 * in, or through one of their API keys, `actorIds`) lose the actor's label and address; entries by or
 * about them lose emails and identity-provider subjects in their details, and those about them or
 * their second factors lose names (other names are of policies, webhooks...); sign-in attempts at their
 * account lose the address they came from; sign-in attempts that
 * named their email (in the organization, or before any organization was known) name `replacement`.
 * Every statement is served by an index, so the cost follows the person's entries, not the trail's size.
 * Returns how many entries changed.
 */
export async function anonymiseAuditEntries(
  tx: DbOrTx,
  organizationId: string,
  userId: string,
  actorIds: string[],
  email: string | null,
  replacement: string,
): Promise<number> {
  const changed = new Set<string>();
  const note = (rows: { id: string }[]) => {
    for (const row of rows) changed.add(row.id);
  };
  const inOrganization = eq(auditLogs.organizationId, organizationId);
  note(
    await tx
      .update(auditLogs)
      .set({ actorLabel: null, ip: null })
      .where(and(inOrganization, inArray(auditLogs.actorId, actorIds)))
      .returning({ id: auditLogs.id }),
  );
  // Two indexed lookups (by actor, by target): an OR of the two would read the organization's whole trail.
  const byOrAboutThem = sql`id IN (
    SELECT id FROM audit_logs WHERE organization_id = ${organizationId} AND actor_id IN ${actorIds}
    UNION SELECT id FROM audit_logs
      WHERE organization_id = ${organizationId} AND target_id = ${userId} AND target_type = 'user')`;
  const details = sql.raw("details");
  note(
    await selectRows<{ id: string }>(
      tx,
      sql`
      UPDATE audit_logs SET details = CASE
        WHEN (target_type = 'user' AND target_id = ${userId}) OR action LIKE 'mfa.%'
          THEN ${jsonWithout(tx, details, ["email", "subject", "name"])}
        ELSE ${jsonWithout(tx, details, ["email", "subject"])} END
      WHERE ${byOrAboutThem} AND details IS NOT NULL
      RETURNING id`,
    ),
  );
  // Sign-in attempts at their account (anonymous until the password or code was right) came from them.
  note(
    await tx
      .update(auditLogs)
      .set({ ip: null })
      .where(
        and(
          inOrganization,
          eq(auditLogs.targetId, userId),
          eq(auditLogs.targetType, "user"),
          eq(auditLogs.actorType, "anonymous"),
        ),
      )
      .returning({ id: auditLogs.id }),
  );
  if (email) {
    // Any other place their email sits in the details of those entries (a "key name (email)" label).
    await replaceEmailInJson(tx, "audit_logs", "details", byOrAboutThem, email, replacement);
    note(
      await tx
        .update(auditLogs)
        .set({ actorLabel: replacement })
        .where(
          and(
            eq(auditLogs.actorType, "anonymous"),
            eq(auditLogs.actorLabel, email),
            or(inOrganization, isNull(auditLogs.organizationId)),
          ),
        )
        .returning({ id: auditLogs.id }),
    );
  }
  return changed.size;
}
