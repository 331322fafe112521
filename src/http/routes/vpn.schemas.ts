import { Type } from "@sinclair/typebox";
import { Timestamp, Uuid } from "../schemas/common";

const PeerSettingsFields = {
  endpoint: Type.String({ description: "host:port of the VPN server (vpn.endpoint)" }),
  public_key: Type.String({ description: "The device's WireGuard public key" }),
  address: Type.String({
    description:
      "The device's VPN address from its organization's subnet, e.g. 10.100.0.2/32; it changes only when " +
      "the operator changes vpn.address_pool or vpn.organization_prefix_length",
  }),
  server_public_key: Type.String({
    description:
      "The VPN server's WireGuard public key: the [Peer] PublicKey. Replaced once, when the installation " +
      "gets its second organization",
  }),
  allowed_ips: Type.Array(Type.String({ maxLength: 64 }), {
    maxItems: 256,
    description:
      "Networks routed through the tunnel: vpn.allowed_ips, else 0.0.0.0/0 when the device's policy " +
      "has network.vpn_required without network.split_tunnel, else the device's organization's subnet " +
      "of the pool, with the server's own address (/32) when it lies outside that subnet",
  }),
  dns: Type.Array(Type.String({ maxLength: 253 }), {
    maxItems: 32,
    description: "DNS servers or search domains for the tunnel; may be empty",
  }),
  persistent_keepalive: Type.Integer({
    minimum: 0,
    maximum: 65535,
    description: "Seconds between keepalives (0: off)",
  }),
};

/** The peer settings the check-in repeats. */
export const PeerSettingsSchema = Type.Object(PeerSettingsFields, {
  title: "VpnPeerSettings",
  description: "The current tunnel settings; rewrite the tunnel when any of them changed",
});

/** The enrollment's vpn_config. */
export const DeviceVpnConfigSchema = Type.Object(
  {
    ...PeerSettingsFields,
    private_key: Type.Optional(
      Type.String({
        description:
          "The device's WireGuard private key, returned once and never stored; absent when the device sent its own public_key",
      }),
    ),
    wg_quick: Type.String({
      description:
        "The complete wg-quick file ([Interface] PrivateKey, Address, DNS; [Peer] PublicKey, Endpoint, " +
        "AllowedIPs, PersistentKeepalive). When the device sent its own public_key, the PrivateKey line " +
        "is a comment to replace with the device's private key.",
    }),
  },
  { title: "DeviceVpnConfig" },
);

export const VpnServerConfigSchema = Type.Object(
  {
    server_public_key: Type.String(),
    key_managed_by: Type.Union([Type.Literal("bulwark"), Type.Literal("operator")], {
      description:
        "bulwark: Bulwark generated the key pair and wg_quick carries the private key; operator: " +
        "vpn.server_public_key is set and your server keeps its private key",
    }),
    includes_private_key: Type.Boolean({
      description:
        "Whether wg_quick carries the server's private key: only when Bulwark holds it and this is the " +
        "installation's only organization (else `bulwark vpn server-config` on the Bulwark host)",
    }),
    address_pool: Type.String({ description: "vpn.address_pool" }),
    organization_subnets: Type.Array(Type.String(), {
      description:
        "The subnets of the pool (vpn.organization_prefix_length) whose devices reach each other: this " +
        "organization's. wg_quick's PostUp drops forwarding between pool addresses outside one subnet",
    }),
    address: Type.String({
      description: "The server's tunnel address: the pool's first host, e.g. 10.100.0.1/16",
    }),
    endpoint: Type.String({ description: "vpn.endpoint" }),
    listen_port: Type.Integer({ description: "The endpoint's port" }),
    peers: Type.Array(
      Type.Object({
        device_id: Uuid,
        device_name: Type.String(),
        public_key: Type.String(),
        allowed_ips: Type.Array(Type.String({ maxLength: 64 }), {
          maxItems: 256,
          description: "The device's address, e.g. 10.100.0.2/32",
        }),
      }),
      { description: "Every device of the organization that is not suspended or wiped, by address" },
    ),
    wg_quick: Type.String({
      description:
        "The server's wg-quick file: [Interface] with PrivateKey, Address, ListenPort, and PostUp/PostDown " +
        "lines that install and remove an nftables table (inet bulwark_<interface>) dropping forwarding " +
        "between organizations' subnets; one [Peer] per device",
    }),
  },
  { title: "VpnServerConfig" },
);

/** The CSR field of enrollment and renewal. */
export const CsrField = Type.String({
  minLength: 1,
  maxLength: 16384,
  description:
    "A PKCS#10 certificate signing request in PEM (openssl req -new), for an ECDSA P-256 key or an RSA " +
    "key of 2048 bits or more; its subject is ignored",
});

export const RenewCertificateBody = Type.Object({ csr: CsrField });

export const RenewedCertificateSchema = Type.Object(
  {
    device_certificate: Type.String({ description: "PEM; CN = device id, O = organization; valid one year" }),
    certificate_expires_at: Timestamp,
    serial: Type.String({ description: "Hexadecimal, as `openssl x509 -serial` prints it" }),
    revoked_certificates: Type.Integer({ description: "How many earlier certificates this revoked" }),
  },
  { title: "RenewedCertificate" },
);
