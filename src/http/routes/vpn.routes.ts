import { Type } from "@sinclair/typebox";
import { Elysia } from "elysia";
import { reportHandshakes } from "../../domain/vpn/report-handshakes";
import { listVpnPeers, VpnPeersSchema } from "../../domain/vpn/vpn-peers";
import { vpnServerConfig } from "../../domain/vpn/vpn-server-config";
import { VpnSettingsSchema, vpnSettings } from "../../domain/vpn/vpn-settings";
import type { AppDeps } from "../app-deps";
import type { securityPlugin } from "../plugins/security";
import { errorResponses } from "../schemas/common";
import { VpnServerConfigSchema } from "./vpn.schemas";

/** Whether an If-None-Match header names `etag` (or is `*`): weak and strong forms compare alike. */
function matchesEtag(ifNoneMatch: string | null, etag: string): boolean {
  if (ifNoneMatch === null) return false;
  return ifNoneMatch
    .split(",")
    .map((candidate) => candidate.trim().replace(/^W\//, ""))
    .some((candidate) => candidate === "*" || candidate === etag);
}

/** /api/v1/vpn: the WireGuard server's side of the devices' tunnels. */
export function vpnRoutes(deps: AppDeps, security: ReturnType<typeof securityPlugin>) {
  return new Elysia({ prefix: "/api/v1/vpn", tags: ["VPN"] })
    .use(security)
    .get("/settings", ({ principal }) => vpnSettings(deps, principal.organizationId), {
      access: "devices:read",
      response: { 200: VpnSettingsSchema, ...errorResponses(401, 403, 429, 503) },
      detail: {
        summary: "The VPN settings devices receive",
        description:
          "The endpoint, server public key, address pool, DNS and keepalive every enrollment's " +
          "vpn_config and check-in carry. endpoint_is_example is true while vpn.endpoint is still the " +
          "example value: devices then get a tunnel to a host that does not exist (serve and config " +
          "check warn about it too).",
      },
    })
    .get(
      "/peers",
      async ({ principal, request, set }) => {
        const peers = await listVpnPeers(deps, principal.organizationId);
        const etag = `"${peers.version}"`;
        set.headers.etag = etag;
        if (!matchesEtag(request.headers.get("if-none-match"), etag)) return peers;
        set.status = 304;
        return undefined;
      },
      {
        access: "vpn:read",
        response: {
          200: VpnPeersSchema,
          304: Type.Void({ description: "Not modified: the list is still the one If-None-Match names" }),
          ...errorResponses(401, 403, 429, 503),
        },
        detail: {
          summary: "The WireGuard server's peers, without its private key",
          description:
            "What the VPN server must hold for this organization's devices: one peer per device that is " +
            "not suspended or wiped (deleted and retired devices are gone), the server's public key, " +
            "address and listen port, read at the moment of the call. It never carries a private key " +
            "and is not audited, so a VPN host may poll it every few seconds with an API key that has " +
            "only the vpn:read scope: `bulwark vpn sync` does, and keeps the interface's peers equal to " +
            'it (docs/vpn.md). The answer\'s ETag is its version: sent back as If-None-Match: "<version>", ' +
            "an unchanged list is a 304 without a body.",
        },
      },
    )
    .post(
      "/handshakes",
      async ({ body, principal }) =>
        await reportHandshakes(
          deps,
          principal.organizationId,
          body.handshakes.map((handshake) => ({
            publicKey: handshake.public_key,
            at: new Date(handshake.latest_handshake),
          })),
        ),
      {
        access: "vpn:report",
        body: Type.Object({
          handshakes: Type.Array(
            Type.Object({
              public_key: Type.String({
                pattern: "^[A-Za-z0-9+/]{43}=$",
                description: "a WireGuard public key (base64 of 32 bytes): the peer's",
              }),
              latest_handshake: Type.String({
                format: "date-time",
                description: "When the VPN host last completed a handshake with the peer",
              }),
            }),
            { maxItems: 10_000, description: "Peers that have had a handshake (none: leave them out)" },
          ),
        }),
        response: {
          200: Type.Object(
            { updated: Type.Integer({ description: "Devices whose last_seen, status or facts changed" }) },
            { title: "HandshakeReport" },
          ),
          ...errorResponses(400, 401, 403, 429, 503),
        },
        detail: {
          summary: "Report the handshakes the VPN server saw",
          description:
            "Sent by `bulwark vpn sync` with a key that also has the vpn:report scope. For a phone " +
            "added with its VPN profile only (no agent speaks for it), a handshake newer than its " +
            "last_seen becomes its last_seen and makes it online when within " +
            "devices.offline_after_seconds (the offline job makes it offline later), and vpn_connected " +
            "is a handshake within the last 180 s. Devices with an agent, other organizations' keys and " +
            "suspended or wiped devices are left alone.",
        },
      },
    )
    .get(
      "/server-config",
      ({ principal, actor }) => vpnServerConfig(deps, actor, { organizationId: principal.organizationId }),
      {
        access: "admin",
        response: { 200: VpnServerConfigSchema, ...errorResponses(401, 403, 429, 503) },
        detail: {
          summary: "The WireGuard server's configuration",
          description:
            "The server's public key, address (the pool's first host), listen port and one peer per " +
            "device of the organization that is not suspended or wiped (deleted devices are gone), read at " +
            "the moment of the call: enrolling, suspending, unsuspending, wiping or deleting a device " +
            "changes it at once. wg_quick is the server's wg-quick file, with the private key when Bulwark " +
            "generated the pair (key_managed_by: bulwark) and this organization is the installation's only " +
            "one (includes_private_key); with several organizations sharing the one server, the operator " +
            "exports every peer and the key with `bulwark vpn server-config`. With vpn.server_public_key " +
            "set, your server keeps its key. Its PostUp installs nftables rules that drop forwarding " +
            "between organizations' subnets (organization_subnets). Apply it with `wg-quick up wg0` the " +
            "first time, then `wg syncconf wg0 <(wg-quick strip wg0)` after writing it to " +
            "/etc/wireguard/wg0.conf (docs/vpn.md), or let `bulwark vpn sync` keep the peers current from " +
            "GET /vpn/peers. Each export is audited (vpn.server_config_export). 503 " +
            "vpn_server_key_unreadable when the key file beside the database does not open the private key.",
        },
      },
    );
}
