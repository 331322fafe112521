import { and, eq } from "drizzle-orm";
import { type DbOrTx, withTransaction } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { enrollmentTokens } from "../../db/tables";
import { toIso } from "../../lib/clock";
import { recordAudit } from "../audit/record-audit";
import type { Actor, DomainDeps } from "../deps";
import { NotFoundError } from "../errors";

/** Revokes an enrollment token; devices already enrolled with it are not affected. Idempotent. */
export async function revokeEnrollmentToken(
  deps: DomainDeps,
  actor: Actor,
  organizationId: string,
  id: string,
): Promise<void> {
  const now = deps.clock.now();
  await withTransaction(deps.db, async (tx) => {
    const row = await firstRow(
      tx
        .select({ id: enrollmentTokens.id, revokedAt: enrollmentTokens.revokedAt })
        .from(enrollmentTokens)
        .where(
          and(eq(enrollmentTokens.id, id.toLowerCase()), eq(enrollmentTokens.organizationId, organizationId)),
        ),
    );
    if (!row) throw new NotFoundError("enrollment token");
    if (row.revokedAt) return;
    await tx
      .update(enrollmentTokens)
      .set({ revokedAt: toIso(now) })
      .where(eq(enrollmentTokens.id, row.id));
    await recordAudit(tx, now, actor, {
      action: "enrollment_token.revoke",
      targetType: "enrollment_token",
      targetId: row.id,
    });
  });
}

/** A policy is deleted: tokens that would have assigned it now enroll devices with the default. */
export async function clearEnrollmentTokenPolicy(
  tx: DbOrTx,
  organizationId: string,
  policyId: string,
): Promise<void> {
  await tx
    .update(enrollmentTokens)
    .set({ policyId: null })
    .where(and(eq(enrollmentTokens.organizationId, organizationId), eq(enrollmentTokens.policyId, policyId)));
}
