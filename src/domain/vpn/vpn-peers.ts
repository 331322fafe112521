import { createHash } from "node:crypto";
import { type Static, Type } from "@sinclair/typebox";
import { and, asc, eq, inArray, isNotNull } from "drizzle-orm";
import type { DbOrTx } from "../../db/client";
import { devices } from "../../db/tables";
import { formatIpv4 } from "../../lib/ipv4";
import { Uuid } from "../../lib/schema-types";
import type { DomainDeps } from "../deps";
import { vpnAddressPool } from "../devices/allocate-vpn-address";
import { vpnServerAddress } from "./organization-subnets";
import { wireGuardServerPublicKey } from "./server-key";

/** Statuses whose devices are peers: a suspended or wiped device has no tunnel (a deleted one no row). */
const PEER_STATUSES = ["online", "offline", "pending"] as const;

export const VpnServerPeerSchema = Type.Object(
  {
    device_id: Uuid,
    device_name: Type.String(),
    public_key: Type.String({ description: "The device's WireGuard public key: the [Peer] PublicKey" }),
    allowed_ips: Type.Array(Type.String({ maxLength: 64 }), {
      maxItems: 256,
      description: "The device's address, e.g. 10.100.0.2/32: the [Peer] AllowedIPs",
    }),
  },
  { title: "VpnServerPeer", description: "A device that may use the tunnel: one peer of the VPN server" },
);

/** One peer of the VPN server: a device that may use the tunnel. */
export type VpnServerPeer = Static<typeof VpnServerPeerSchema>;

export const VpnPeersSchema = Type.Object(
  {
    version: Type.String({
      description:
        "Changes whenever anything else in this answer does; also sent as the ETag (in quotes). Send it " +
        'back as If-None-Match: "<version>" and an unchanged list is a 304 without a body',
    }),
    server_public_key: Type.String({
      description:
        "The key devices expect the server to have: when it is not the interface's own public key, " +
        "install the key from `bulwark vpn server-config` (the list never carries a private key)",
    }),
    address: Type.String({
      description: "The server's tunnel address: the pool's first host, e.g. 10.100.0.1/16",
    }),
    listen_port: Type.Integer({ description: "vpn.endpoint's port" }),
    peers: Type.Array(VpnServerPeerSchema, {
      description: "Every device of the organization that is not suspended or wiped, by address",
    }),
  },
  { title: "VpnPeers" },
);

export type VpnPeers = Static<typeof VpnPeersSchema>;

/**
 * The peers of the VPN server: every device of `organizationId` (of every organization when null) that
 * may use the tunnel, by address. Read in the caller's transaction, so a change shows at once.
 */
export async function vpnServerPeers(db: DbOrTx, organizationId: string | null): Promise<VpnServerPeer[]> {
  const rows = await db
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
    .orderBy(asc(devices.vpnAddress));
  return rows.map((row) => ({
    device_id: row.id,
    device_name: row.name,
    public_key: row.publicKey,
    allowed_ips: [`${formatIpv4(row.address ?? 0)}/32`],
  }));
}

/**
 * What the VPN server of an organization's devices must hold, without its private key: the peers (as
 * the server export has them), the key they expect, the server's address and port, and a version that
 * changes exactly when any of these does, so that `bulwark vpn sync` polling it learns of a change from
 * a 304 or a new list. Not audited: it carries no secret and is read every few seconds.
 */
export async function listVpnPeers(deps: DomainDeps, organizationId: string): Promise<VpnPeers> {
  const pool = vpnAddressPool(deps.config.vpn.address_pool);
  const content = {
    server_public_key: await wireGuardServerPublicKey(deps),
    address: `${formatIpv4(vpnServerAddress(pool))}/${pool.prefixLength}`,
    listen_port: Number(deps.config.vpn.endpoint.split(":").at(-1)),
    peers: await vpnServerPeers(deps.db, organizationId),
  };
  const version = createHash("sha256").update(JSON.stringify(content)).digest("base64url").slice(0, 22);
  return { version, ...content };
}
