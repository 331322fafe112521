import { and, count, eq, isNotNull } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { firstRow } from "../../db/first-row";
import { organizations } from "../../db/tables";
import { formatCidr, formatIpv4, parseCidr } from "../../lib/ipv4";
import { recordAudit } from "../audit/record-audit";
import type { Actor, DomainDeps } from "../deps";
import { vpnAddressPool } from "../devices/allocate-vpn-address";
import { vpnServerAddress } from "./organization-subnets";
import { wireGuardServerPrivateKey, wireGuardServerPublicKey } from "./server-key";
import { type VpnServerPeer, vpnServerPeers } from "./vpn-peers";
import { formatWgQuick } from "./wg-quick";

/** GET /vpn/server-config. */
export interface VpnServerConfig {
  server_public_key: string;
  /** Whether the private key is Bulwark's or the operator's (vpn.server_public_key). */
  key_managed_by: "bulwark" | "operator";
  /** Whether wg_quick carries the private key (see vpnServerConfig). */
  includes_private_key: boolean;
  address_pool: string;
  /** The subnets whose devices may reach each other: the organization's, or every organization's. */
  organization_subnets: string[];
  address: string;
  endpoint: string;
  listen_port: number;
  peers: VpnServerPeer[];
  wg_quick: string;
}

/**
 * The wg-quick PostUp and PostDown commands that keep organizations apart on the server: an nftables
 * table of its own (`inet bulwark_<interface>`, wg-quick puts the interface's name for `%i`) whose
 * forward chain accepts traffic between two addresses of one subnet and drops the rest between pool
 * addresses that enters from the tunnel. Traffic to the server itself (its input, not forwarding) and
 * to anything outside the pool is left alone. The PostUp replaces the table in one nft transaction, so
 * running it again (after a new organization) swaps the rules without a gap.
 */
export function forwardingRules(pool: string, subnets: string[]): { postUp: string; postDown: string } {
  const table = "inet bulwark_%i";
  const rules = [
    ...subnets.map((subnet) => `iifname "%i" ip saddr ${subnet} ip daddr ${subnet} accept;`),
    `iifname "%i" ip saddr ${pool} ip daddr ${pool} drop;`,
  ];
  const chain = `chain forward { type filter hook forward priority filter; policy accept; ${rules.join(" ")} };`;
  return {
    postUp: `nft 'add table ${table}; delete table ${table}; table ${table} { ${chain} }'`,
    postDown: `nft delete table ${table}`,
  };
}

/**
 * The WireGuard server's configuration, read at the moment of the call (so enrolling, suspending,
 * unsuspending, wiping or deleting a device shows at once): the server's address (the pool's first
 * host, with the pool's length), its listen port (the endpoint's), one peer per device that may use the
 * tunnel, the forwarding rules that keep organizations' subnets apart (forwardingRules), and the
 * wg-quick file. `scope` is one organization (an admin, through the API) or the whole installation (the
 * operator, `bulwark vpn server-config`). One server serves every organization, so its private key goes
 * to an organization's admin only while that organization is the installation's only one: otherwise it
 * would let one tenant's admin impersonate the server to the others' devices (and the pair is replaced
 * when the second organization is created). The export is audited.
 */
export async function vpnServerConfig(
  deps: DomainDeps,
  actor: Actor,
  scope: { organizationId: string } | "installation",
): Promise<VpnServerConfig> {
  const organizationId = scope === "installation" ? null : scope.organizationId;
  const keyManagedBy = deps.config.vpn.server_public_key === "" ? "bulwark" : "operator";
  const pool = vpnAddressPool(deps.config.vpn.address_pool);
  const addressPool = formatCidr(pool);
  // The pool's first host, which allocation never hands to a device.
  const serverAddress = `${formatIpv4(vpnServerAddress(pool))}/${pool.prefixLength}`;
  const listenPort = Number(deps.config.vpn.endpoint.split(":").at(-1));
  return await withTransaction(deps.db, async (tx) => {
    const isOnlyOrganization =
      organizationId === null ||
      ((await firstRow(tx.select({ total: count() }).from(organizations)))?.total ?? 0) <= 1;
    const privateKey = isOnlyOrganization ? await wireGuardServerPrivateKey(deps) : null;
    const subnets = (
      await tx
        .select({ vpnSubnet: organizations.vpnSubnet })
        .from(organizations)
        .where(
          and(
            organizationId === null ? undefined : eq(organizations.id, organizationId),
            isNotNull(organizations.vpnSubnet),
          ),
        )
    )
      .flatMap((row) => parseCidr(row.vpnSubnet ?? "") ?? [])
      .sort((a, b) => a.network - b.network)
      .map(formatCidr);
    const peers = await vpnServerPeers(tx, organizationId);
    const serverPublicKey = await wireGuardServerPublicKey(deps);
    const rules = forwardingRules(addressPool, subnets);
    const wgQuick = formatWgQuick([
      {
        name: "Interface",
        comment: `Bulwark VPN server: ${peers.length} peer(s); export again (or use the API) after devices change`,
        entries: [
          privateKey !== null
            ? ["PrivateKey", privateKey]
            : keyManagedBy === "operator"
              ? ["#", `PrivateKey = <the private key of ${serverPublicKey}, kept by your server>`]
              : [
                  "#",
                  `PrivateKey = <the private key of ${serverPublicKey}: this installation serves several organizations, so only the operator gets it, with \`bulwark vpn server-config\` on the Bulwark host>`,
                ],
          ["Address", serverAddress],
          ["ListenPort", listenPort],
          [
            "#",
            `Organizations' subnets (${subnets.join(", ") || "none yet"}) do not reach each other: nftables drops forwarding between them (devices of one organization reach each other when IPv4 forwarding is on)`,
          ],
          ["PostUp", rules.postUp],
          ["PostDown", rules.postDown],
        ],
      },
      ...peers.map((peer) => ({
        name: "Peer" as const,
        comment: `${peer.device_name} (${peer.device_id})`,
        entries: [
          ["PublicKey", peer.public_key],
          ["AllowedIPs", peer.allowed_ips.join(", ")],
        ] as [string, string][],
      })),
    ]);
    await recordAudit(tx, deps.clock.now(), actor, {
      action: "vpn.server_config_export",
      targetType: organizationId === null ? undefined : "organization",
      targetId: organizationId ?? undefined,
      details: { peers: peers.length, includes_private_key: privateKey !== null },
    });
    return {
      server_public_key: serverPublicKey,
      key_managed_by: keyManagedBy,
      includes_private_key: privateKey !== null,
      address_pool: addressPool,
      organization_subnets: subnets,
      address: serverAddress,
      endpoint: deps.config.vpn.endpoint,
      listen_port: listenPort,
      peers,
      wg_quick: wgQuick,
    };
  });
}
