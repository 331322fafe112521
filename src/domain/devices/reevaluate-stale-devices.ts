import { and, asc, eq } from "drizzle-orm";
import { type DbOrTx, withTransaction } from "../../db/client";
import { devices } from "../../db/tables";
import type { DomainDeps } from "../deps";
import { type EffectivePolicy, resolveEffectivePolicy } from "../policies/effective-policy";
import { reevaluateDeviceCompliance } from "./reevaluate-device-compliance";

/** Stale devices re-evaluated per transaction, so one batch never holds the write lock for long. */
export const STALE_COMPLIANCE_BATCH_SIZE = 500;

/** Up to `limit` stale devices, of one organization or of all, in devices_compliance_stale_idx order. */
export function selectStaleDevices(db: DbOrTx, organizationId: string | undefined, limit: number) {
  return db
    .select()
    .from(devices)
    .where(
      and(
        eq(devices.complianceStale, true),
        organizationId === undefined ? undefined : eq(devices.organizationId, organizationId),
      ),
    )
    .orderBy(asc(devices.organizationId), asc(devices.id))
    .limit(limit);
}

/**
 * Re-evaluates up to one batch of stale devices, of one organization or of all, in one transaction
 * (devices.compliance_changed for each flip). Wiped devices only lose the flag. Returns how many were taken.
 */
export async function reevaluateStaleDeviceBatch(
  deps: DomainDeps,
  organizationId?: string,
  batchSize = STALE_COMPLIANCE_BATCH_SIZE,
): Promise<number> {
  const now = deps.clock.now();
  return await withTransaction(deps.db, async (tx) => {
    const stale = await selectStaleDevices(tx, organizationId, batchSize);
    // Devices of a batch mostly share a few policies: each is resolved once.
    const policies = new Map<string, EffectivePolicy>();
    for (const device of stale) {
      if (device.status === "wiped") {
        await tx.update(devices).set({ complianceStale: false }).where(eq(devices.id, device.id));
        continue;
      }
      const key = `${device.organizationId}/${device.policyId ?? ""}`;
      let policy = policies.get(key);
      if (policy === undefined) {
        policy = await resolveEffectivePolicy(tx, device.organizationId, device.policyId);
        policies.set(key, policy);
      }
      await reevaluateDeviceCompliance(tx, now, device, policy, deps.config.devices.min_os_versions);
    }
    return stale.length;
  });
}

/**
 * Re-evaluates every stale device, batch after batch, yielding to the event loop between batches so that
 * requests are served while a large organization catches up. Returns how many devices were taken.
 */
export async function reevaluateStaleDevices(deps: DomainDeps): Promise<number> {
  let total = 0;
  for (;;) {
    const taken = await reevaluateStaleDeviceBatch(deps);
    total += taken;
    if (taken < STALE_COMPLIANCE_BATCH_SIZE) return total;
    await Bun.sleep(0);
  }
}
