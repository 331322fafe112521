/**
 * What the VPN host saw: `bulwark vpn sync` reports each peer's latest handshake (`wg show IFACE
 * latest-handshakes`), and for a phone without an agent, which nothing else speaks for, that is the one
 * real sign of life: the handshake is its last_seen, a recent one makes it online (the offline job makes
 * it offline again when they stop), and `vpn_connected` is a handshake within the last 180 s, as the
 * agents judge their own tunnel. Devices with an agent report for themselves and are left alone; a
 * handshake older than what is known changes nothing.
 */
import { and, eq, inArray, notInArray } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { devices, phoneEnrollments } from "../../db/tables";
import { addSeconds, toIso } from "../../lib/clock";
import type { DomainDeps } from "../deps";
import { appendDeviceLog } from "../devices/append-device-log";
import { evaluateCompliance } from "../devices/evaluate-compliance";
import { resolveEffectivePolicy } from "../policies/effective-policy";
import type { PolicyData } from "../policies/policy-document";

/** How fresh a handshake must be for the tunnel to count as connected (the agents' rule). */
export const HANDSHAKE_FRESH_SECONDS = 180;

export interface ReportedHandshake {
  publicKey: string;
  at: Date;
}

/** Keys per query: far below either store's limit on bound parameters. */
const KEYS_PER_QUERY = 500;

/**
 * Records the handshakes of the organization's phones among `handshakes`; returns how many devices it
 * changed. A handshake in the future (a VPN host's clock ahead) counts as now.
 */
export async function reportHandshakes(
  deps: DomainDeps,
  organizationId: string,
  handshakes: readonly ReportedHandshake[],
): Promise<{ updated: number }> {
  const now = deps.clock.now();
  const latest = new Map<string, Date>();
  for (const { publicKey, at } of handshakes) {
    const seen = at > now ? now : at;
    if ((latest.get(publicKey)?.getTime() ?? 0) < seen.getTime()) latest.set(publicKey, seen);
  }
  const keys = [...latest.keys()];
  // Phones share a few policies: each is read once per report.
  const policies = new Map<string | null, Promise<PolicyData>>();
  const policyOf = (policyId: string | null) => {
    let policy = policies.get(policyId);
    if (!policy) {
      policy = resolveEffectivePolicy(deps.db, organizationId, policyId).then((found) => found.policyData);
      policies.set(policyId, policy);
    }
    return policy;
  };
  const recentSince = toIso(addSeconds(now, -deps.config.devices.offline_after_seconds));
  let updated = 0;
  for (let start = 0; start < keys.length; start += KEYS_PER_QUERY) {
    const chunk = keys.slice(start, start + KEYS_PER_QUERY);
    updated += await withTransaction(deps.db, async (tx) => {
      const phones = await tx
        .select({ device: devices })
        .from(devices)
        .innerJoin(phoneEnrollments, eq(phoneEnrollments.deviceId, devices.id))
        .where(
          and(
            eq(devices.organizationId, organizationId),
            inArray(devices.vpnPublicKey, chunk),
            notInArray(devices.status, ["wiped", "suspended"]),
          ),
        );
      let changed = 0;
      for (const { device } of phones) {
        const at = latest.get(device.vpnPublicKey);
        if (!at) continue;
        const seen = toIso(at);
        const isNewer = seen > device.lastSeen;
        const connected = now.getTime() - at.getTime() <= HANDSHAKE_FRESH_SECONDS * 1000;
        const isRecent = seen >= recentSince;
        // A recent handshake is a phone that is there, whatever it was (pending until its first one).
        const status = isRecent ? "online" : device.status;
        if (!isNewer && status === device.status && device.facts?.vpn_connected === connected) continue;
        const facts = { ...(device.facts ?? {}), vpn_connected: connected };
        const compliance = evaluateCompliance({
          platform: device.platform,
          osVersion: device.osVersion,
          facts,
          policy: await policyOf(device.policyId),
          minimums: deps.config.devices.min_os_versions,
        });
        await tx
          .update(devices)
          .set({
            lastSeen: isNewer ? seen : device.lastSeen,
            status,
            facts,
            complianceStatus: compliance.status,
            complianceViolations: compliance.violations,
            complianceMissing: compliance.missing,
            complianceCheckedAt: toIso(now),
            complianceStale: false,
            updatedAt: toIso(now),
          })
          .where(eq(devices.id, device.id));
        if (status !== device.status)
          await appendDeviceLog(tx, now, device.id, "device.vpn_handshake", {
            latest_handshake: seen,
            previous_status: device.status,
            status,
          });
        changed++;
      }
      return changed;
    });
  }
  return { updated };
}
