import { and, asc, count, eq, inArray, isNotNull } from "drizzle-orm";
import { withTransaction } from "../../db/client";
import { devices, organizations } from "../../db/schema";
import { formatIpv4 } from "../../lib/ipv4";
import { recordAudit } from "../audit/record-audit";
import type { Actor, DomainDeps } from "../deps";
import { vpnAddressPool } from "../devices/allocate-vpn-address";
import { wireGuardServerPrivateKey, wireGuardServerPublicKey } from "./server-key";
import { formatWgQuick } from "./wg-quick";

/** One peer of the VPN server: a device that may use the tunnel. */
export interface VpnServerPeer {
  device_id: string;
  device_name: string;
  public_key: string;
  allowed_ips: string[];
}

/** GET /vpn/server-config. */
export interface VpnServerConfig {
  server_public_key: string;
  /** Whether the private key is Bulwark's or the operator's (vpn.server_public_key). */
  key_managed_by: "bulwark" | "operator";
  /** Whether wg_quick carries the private key (see vpnServerConfig). */
  includes_private_key: boolean;
  address_pool: string;
  address: string;
  endpoint: string;
  listen_port: number;
  peers: VpnServerPeer[];
  wg_quick: string;
}

/** Statuses whose devices are peers: a suspended or wiped device has no tunnel (a deleted one no row). */
const PEER_STATUSES = ["online", "offline", "pending"] as const;

/**
 * The WireGuard server's configuration, read at the moment of the call (so enrolling, suspending,
 * unsuspending, wiping or deleting a device shows at once): the server's address (the pool's first
 * host), its listen port (the endpoint's), one peer per device that may use the tunnel, and the
 * wg-quick file. `scope` is one organization (an admin, through the API) or the whole installation (the
 * operator, `bulwark vpn server-config`). One server serves every organization, so its private key goes
 * to an organization's admin only while that organization is the installation's only one: otherwise it
 * would let one tenant's admin impersonate the server to the others' devices. The export is audited.
 */
export function vpnServerConfig(
  deps: DomainDeps,
  actor: Actor,
  scope: { organizationId: string } | "installation",
): VpnServerConfig {
  const organizationId = scope === "installation" ? null : scope.organizationId;
  const isOnlyOrganization =
    organizationId === null ||
    (deps.db.select({ total: count() }).from(organizations).get()?.total ?? 0) <= 1;
  const privateKey = isOnlyOrganization ? wireGuardServerPrivateKey(deps) : null;
  const keyManagedBy = deps.config.vpn.server_public_key === "" ? "bulwark" : "operator";
  const pool = vpnAddressPool(deps.config.vpn.address_pool);
  const addressPool = `${formatIpv4(pool.network)}/${pool.prefixLength}`;
  // The pool's first host, which allocation never hands to a device (hostRange).
  const serverAddress = `${formatIpv4(pool.network + 1)}/${pool.prefixLength}`;
  const listenPort = Number(deps.config.vpn.endpoint.split(":").at(-1));
  return withTransaction(deps.db, (tx) => {
    const rows = tx
      .select({
        id: devices.id,
        name: devices.deviceName,
        publicKey: devices.vpnPublicKey,
        address: devices.vpnAddress,
      })
      .from(devices)
      .where(
        and(
          organizationId === null ? undefined : eq(devices.organizationId, organizationId),
          inArray(devices.status, [...PEER_STATUSES]),
          isNotNull(devices.vpnAddress),
        ),
      )
      .orderBy(asc(devices.vpnAddress))
      .all();
    const peers = rows.map(
      (row): VpnServerPeer => ({
        device_id: row.id,
        device_name: row.name,
        public_key: row.publicKey,
        allowed_ips: [`${formatIpv4(row.address ?? 0)}/32`],
      }),
    );
    const serverPublicKey = wireGuardServerPublicKey(deps, tx);
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
    recordAudit(tx, deps.clock.now(), actor, {
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
      address: serverAddress,
      endpoint: deps.config.vpn.endpoint,
      listen_port: listenPort,
      peers,
      wg_quick: wgQuick,
    };
  });
}
