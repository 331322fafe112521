import { Elysia } from "elysia";
import { vpnServerConfig } from "../../domain/vpn/vpn-server-config";
import { VpnSettingsSchema, vpnSettings } from "../../domain/vpn/vpn-settings";
import type { AppDeps } from "../app-deps";
import type { securityPlugin } from "../plugins/security";
import { errorResponses } from "../schemas/common";
import { VpnServerConfigSchema } from "./vpn.schemas";

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
            "/etc/wireguard/wg0.conf (docs/vpn.md). Each export is audited (vpn.server_config_export). 503 " +
            "vpn_server_key_unreadable when the key file beside the database does not open the private key.",
        },
      },
    );
}
