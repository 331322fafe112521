import { eq, isNotNull } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { organizations } from "../../db/tables";
import { toIso } from "../../lib/clock";
import { newId } from "../../lib/ids";
import { formatCidr, type Ipv4Cidr, parseCidr } from "../../lib/ipv4";
import type { DomainDeps } from "../deps";
import { insertDefaultPolicy } from "../policies/insert-policy";
import { nextOrganizationSubnet } from "../vpn/organization-subnets";
import { rotateWireGuardServerKey } from "../vpn/server-key";
import type { Plan } from "./organization-view";

/**
 * Creates an organization with its default policy and its own subnet of the VPN pool (the lowest free
 * block), in the caller's transaction. When it is the installation's second organization, the VPN
 * server's key pair is replaced (`serverKeyRotation`): the first organization's admins could export the
 * old private key. Later organizations need no new pair: from then on only the operator gets the key,
 * and organizations are never deleted, so no admin has seen the current one.
 */
export async function createOrganization(
  deps: DomainDeps,
  tx: DbOrTx,
  now: Date,
  input: { name: string; plan?: Plan },
): Promise<
  typeof organizations.$inferSelect & {
    serverKeyRotation: Awaited<ReturnType<typeof rotateWireGuardServerKey>>;
  }
> {
  // Two at most: whether this makes the installation's second organization, and which the first is.
  const existing = await tx.select({ id: organizations.id }).from(organizations).limit(2);
  const timestamp = toIso(now);
  const row = {
    id: newId(),
    name: input.name,
    plan: input.plan ?? "standard",
    defaultPolicyId: null as string | null,
    ssoSettings: {},
    deviceCount: 0,
    deviceListVersion: 0,
    requireMfa: false,
    vpnSubnet: formatCidr(nextOrganizationSubnet(deps.config.vpn, await takenSubnets(tx))),
    createdAt: timestamp,
    updatedAt: timestamp,
  };
  await tx.insert(organizations).values(row);
  const policy = await insertDefaultPolicy(tx, now, row.id);
  await tx.update(organizations).set({ defaultPolicyId: policy.id }).where(eq(organizations.id, row.id));
  const [first] = existing;
  const serverKeyRotation =
    first && existing.length === 1 ? await rotateWireGuardServerKey(deps, tx, now, first.id) : null;
  return { ...row, defaultPolicyId: policy.id, serverKeyRotation };
}

/** Every organization's subnet, as the start left them (each inside the pool, none overlapping). */
export async function takenSubnets(tx: DbOrTx): Promise<Ipv4Cidr[]> {
  return (
    await tx
      .select({ vpnSubnet: organizations.vpnSubnet })
      .from(organizations)
      .where(isNotNull(organizations.vpnSubnet))
  ).flatMap((row) => parseCidr(row.vpnSubnet ?? "") ?? []);
}
