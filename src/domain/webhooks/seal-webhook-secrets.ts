import { eq, notLike } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { webhooks } from "../../db/tables";
import type { DomainDeps } from "../deps";

/**
 * Seals the signing secrets stored before secrets were sealed at rest (at start, once; afterwards every
 * secret is sealed when it is written). Returns how many were sealed.
 */
export async function sealWebhookSecrets(deps: DomainDeps): Promise<number> {
  return await withTransaction(deps.db, async (tx) => {
    const plain = await tx
      .select({ id: webhooks.id, secret: webhooks.secret })
      .from(webhooks)
      .where(notLike(webhooks.secret, "sealed:v1:%"));
    for (const row of plain)
      await tx
        .update(webhooks)
        .set({ secret: deps.secrets.seal(row.secret) })
        .where(eq(webhooks.id, row.id));
    return plain.length;
  });
}
