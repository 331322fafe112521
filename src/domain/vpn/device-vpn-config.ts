import { formatIpv4 } from "../../lib/ipv4";
import type { DomainDeps } from "../deps";
import type { PolicyData } from "../policies/policy-document";
import { organizationAllowedIps } from "./organization-subnets";
import { wireGuardServerPublicKey } from "./server-key";
import { formatWgQuick } from "./wg-quick";

/** The peer settings a device needs for its tunnel; the check-in repeats them so that changes reach it. */
export interface DevicePeerSettings {
  endpoint: string;
  /** The device's own public key. */
  public_key: string;
  address: string;
  server_public_key: string;
  allowed_ips: string[];
  dns: string[];
  persistent_keepalive: number;
}

/** The enrollment's vpn_config: the peer settings, the private key when generated here, and a wg-quick file. */
export interface DeviceVpnConfig extends DevicePeerSettings {
  private_key?: string;
  wg_quick: string;
}

/**
 * What a device's peer settings take from its organization and the server: read with the device row
 * (the check-in: src/db/sqlite/check-in-statements.ts), or the subnet alone (enrollment; a null key is read then). Never
 * cached: `bulwark admin create`, in another process, replaces the server key when it makes the second
 * organization.
 */
export interface PeerNetwork {
  organizationSubnet: string | null;
  storedServerPublicKey: string | null;
}

/**
 * A device's peer settings: `vpn.allowed_ips` when configured, else every address (0.0.0.0/0) for a
 * device whose policy requires the VPN without allowing a split tunnel, and its organization's subnet
 * (with the server's address when outside it) for the others: a device routes no other tenant's
 * addresses. (Not 0.0.0.0/0 for every vpn_required: a policy that also sets split_tunnel asks for the
 * split tunnel in so many words, and the balanced template does exactly that.)
 */
export async function devicePeerSettings(
  deps: DomainDeps,
  device: { vpnAddress: number | null; vpnPublicKey: string },
  network: PeerNetwork,
  policyData: PolicyData,
): Promise<DevicePeerSettings> {
  const allowedIps =
    deps.config.vpn.allowed_ips.length > 0
      ? [...deps.config.vpn.allowed_ips]
      : policyData.network.vpn_required && !policyData.network.split_tunnel
        ? ["0.0.0.0/0"]
        : [...organizationAllowedIps(deps.config.vpn.address_pool, network.organizationSubnet)];
  return {
    endpoint: deps.config.vpn.endpoint,
    public_key: device.vpnPublicKey,
    address: device.vpnAddress === null ? "" : `${formatIpv4(device.vpnAddress)}/32`,
    server_public_key: await wireGuardServerPublicKey(deps, network.storedServerPublicKey),
    allowed_ips: allowedIps,
    dns: [...deps.config.vpn.dns],
    persistent_keepalive: deps.config.vpn.persistent_keepalive,
  };
}

/**
 * The enrollment's vpn_config with its wg-quick file. Without `privateKey` (the device brought its own
 * key pair) the file says where the device's private key goes instead of carrying it.
 */
export function deviceVpnConfig(
  settings: DevicePeerSettings,
  privateKey: string | undefined,
): DeviceVpnConfig {
  const wgQuick = formatWgQuick([
    {
      name: "Interface",
      entries: [
        privateKey === undefined
          ? ["#", `PrivateKey = <the private key of ${settings.public_key}, which only this device holds>`]
          : ["PrivateKey", privateKey],
        ["Address", settings.address],
        ["DNS", settings.dns.length > 0 ? settings.dns.join(", ") : undefined],
      ],
    },
    {
      name: "Peer",
      entries: [
        ["PublicKey", settings.server_public_key],
        ["Endpoint", settings.endpoint],
        ["AllowedIPs", settings.allowed_ips.join(", ")],
        [
          "PersistentKeepalive",
          settings.persistent_keepalive > 0 ? settings.persistent_keepalive : undefined,
        ],
      ],
    },
  ]);
  return { ...settings, ...(privateKey === undefined ? {} : { private_key: privateKey }), wg_quick: wgQuick };
}
