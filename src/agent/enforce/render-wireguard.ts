import { isWireGuardKey } from "../../lib/wireguard";

/** The tunnel settings the server gives (the enrollment's and each check-in's `vpn_config`). */
export interface VpnSettings {
  endpoint: string;
  address: string;
  server_public_key: string;
  allowed_ips: string[];
  dns: string[];
  persistent_keepalive: number;
}

// What wg-quick accepts in each field, and nothing that could start another line or a comment.
const ADDRESS = /^[0-9A-Fa-f.:]+\/\d{1,3}$/;
const DNS_ENTRY = /^[A-Za-z0-9.:_-]+$/;
const ENDPOINT = /^(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9.-]+):\d{1,5}$/;

/** Why `settings` cannot be written as a wg-quick file, or null when every field is well formed. */
export function vpnSettingsProblem(settings: VpnSettings, privateKey: string): string | null {
  if (!isWireGuardKey(privateKey)) return "the device's WireGuard private key is not a WireGuard key";
  if (!isWireGuardKey(settings.server_public_key))
    return `server_public_key ${JSON.stringify(settings.server_public_key)} is not a WireGuard key`;
  if (!ADDRESS.test(settings.address))
    return `address ${JSON.stringify(settings.address)} is not an address/prefix`;
  if (!ENDPOINT.test(settings.endpoint))
    return `endpoint ${JSON.stringify(settings.endpoint)} is not host:port`;
  if (settings.allowed_ips.length === 0) return "allowed_ips is empty";
  const badNetwork = settings.allowed_ips.find((network) => !ADDRESS.test(network));
  if (badNetwork !== undefined)
    return `allowed_ips entry ${JSON.stringify(badNetwork)} is not an address/prefix`;
  const badDns = settings.dns.find((entry) => !DNS_ENTRY.test(entry));
  if (badDns !== undefined) return `dns entry ${JSON.stringify(badDns)} is not an address or a domain`;
  const keepalive = settings.persistent_keepalive;
  if (!Number.isInteger(keepalive) || keepalive < 0 || keepalive > 65535)
    return `persistent_keepalive ${keepalive} is not 0 to 65535`;
  return null;
}

/** The wg-quick(8) file of the tunnel; check `vpnSettingsProblem` first. */
export function renderWireGuardConf(settings: VpnSettings, privateKey: string): string {
  const lines = [
    "# Written by the Bulwark agent from the server's VPN settings; rewritten when they change.",
    "[Interface]",
    `PrivateKey = ${privateKey}`,
    `Address = ${settings.address}`,
  ];
  if (settings.dns.length > 0) lines.push(`DNS = ${settings.dns.join(", ")}`);
  lines.push(
    "",
    "[Peer]",
    `PublicKey = ${settings.server_public_key}`,
    `Endpoint = ${settings.endpoint}`,
    `AllowedIPs = ${settings.allowed_ips.join(", ")}`,
  );
  if (settings.persistent_keepalive > 0) lines.push(`PersistentKeepalive = ${settings.persistent_keepalive}`);
  lines.push("");
  return lines.join("\n");
}

/** `Section.Key` -> value of a wg-quick file's lines, comments left out. */
function fieldsOf(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  let section = "";
  for (const raw of text.split("\n")) {
    const line = raw.replace(/#.*$/, "").trim();
    const header = /^\[(\w+)\]$/.exec(line);
    if (header) section = header[1] ?? "";
    const entry = /^(\w+)\s*=\s*(.*)$/.exec(line);
    if (entry) fields.set(`${section}.${entry[1]}`, entry[2] ?? "");
  }
  return fields;
}

// What `wg syncconf` can change on a running interface without wg-quick: the peer's key, endpoint and
// keepalive. Addresses, DNS and AllowedIPs are routes and resolver settings that wg-quick sets up at `up`.
const LIVE_FIELDS = new Set(["Peer.PublicKey", "Peer.Endpoint", "Peer.PersistentKeepalive"]);

/** Tells whether going from `before` to `after` changes only what `wg syncconf` applies live. */
export function changesOnlyLiveFields(before: string, after: string): boolean {
  const old = fieldsOf(before);
  const next = fieldsOf(after);
  for (const key of new Set([...old.keys(), ...next.keys()]))
    if (old.get(key) !== next.get(key) && !LIVE_FIELDS.has(key)) return false;
  return true;
}
