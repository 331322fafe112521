import { lt } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { samlAssertions, ssoCodes, ssoRequests } from "../../db/tables";
import { toIso } from "../../lib/clock";
import type { DomainDeps } from "../deps";

/**
 * Forgets what single sign-on keeps only for a while: pending and answered sign-in requests, SAML one-time
 * codes, and remembered assertion ids, each once past its expiry (an expired assertion is refused by its
 * own validity window, so forgetting its id opens no replay).
 */
export async function purgeExpiredSsoState(deps: DomainDeps): Promise<{
  requests: number;
  codes: number;
  assertions: number;
}> {
  const now = toIso(deps.clock.now());
  return await withTransaction(deps.db, async (tx) => ({
    requests: (
      await tx.delete(ssoRequests).where(lt(ssoRequests.expiresAt, now)).returning({ id: ssoRequests.id })
    ).length,
    codes: (
      await tx.delete(ssoCodes).where(lt(ssoCodes.expiresAt, now)).returning({ id: ssoCodes.codeDigest })
    ).length,
    assertions: (
      await tx
        .delete(samlAssertions)
        .where(lt(samlAssertions.expiresAt, now))
        .returning({ id: samlAssertions.assertionId })
    ).length,
  }));
}
