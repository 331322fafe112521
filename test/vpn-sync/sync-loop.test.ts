/**
 * The VPN peer sync's pure parts: what to change on the interface, the backoff, and the unit
 * install-service writes.
 */
import { describe, expect, test } from "bun:test";
import { vpnSyncUnit } from "../../src/vpn-sync/install-service";
import { backoffDelay, MAX_BACKOFF_SECONDS } from "../../src/vpn-sync/sync-loop";
import { hasChanges, parseLatestHandshakes, peerChanges } from "../../src/vpn-sync/wireguard-interface";

const KEY_A = `${"a".repeat(43)}=`;
const KEY_B = `${"b".repeat(43)}=`;
const KEY_C = `${"c".repeat(43)}=`;
const peer = (publicKey: string, ...allowedIps: string[]) => ({ publicKey, allowedIps, label: publicKey });

describe("peerChanges", () => {
  test("adds what the list has, removes what it lacks, replaces allowed IPs that differ, leaves the rest", () => {
    const current = {
      publicKey: KEY_C,
      peers: new Map([
        [KEY_A, ["10.100.0.2/32"]],
        [KEY_B, ["10.100.0.3/32", "10.100.0.9/32"]],
        [KEY_C, ["10.100.0.4/32"]],
      ]),
    };
    const changes = peerChanges(
      [
        peer(KEY_A, "10.100.0.2/32"),
        peer(KEY_B, "10.100.0.3/32"),
        peer(`${"d".repeat(43)}=`, "10.100.0.5/32"),
      ],
      current,
    );
    expect(changes.added.map((item) => item.publicKey)).toEqual([`${"d".repeat(43)}=`]);
    expect(changes.changed.map((item) => item.publicKey)).toEqual([KEY_B]);
    expect(changes.removed).toEqual([KEY_C]);
    expect(hasChanges(changes)).toBe(true);
  });

  test("the same peers in another order, or allowed IPs in another order, change nothing", () => {
    const current = { publicKey: null, peers: new Map([[KEY_A, ["10.0.0.1/32", "10.0.0.2/32"]]]) };
    expect(hasChanges(peerChanges([peer(KEY_A, "10.0.0.2/32", "10.0.0.1/32")], current))).toBe(false);
    expect(hasChanges(peerChanges([], { publicKey: null, peers: new Map() }))).toBe(false);
  });

  test("an empty list empties the interface", () => {
    const changes = peerChanges([], { publicKey: null, peers: new Map([[KEY_A, []]]) });
    expect(changes.removed).toEqual([KEY_A]);
  });
});

describe("backoffDelay", () => {
  test("1 s doubling to 60 s, each drawn from the last quarter below its step", () => {
    const low = (failures: number) => backoffDelay(failures, null, () => 0);
    const high = (failures: number) => backoffDelay(failures, null, () => 1);
    expect([1, 2, 3, 4, 5, 6, 7, 8, 20].map(high)).toEqual([1, 2, 4, 8, 16, 32, 60, 60, 60]);
    expect([1, 2, 7].map(low)).toEqual([0.75, 1.5, 45]);
    expect(MAX_BACKOFF_SECONDS).toBe(60);
  });

  test("a server's Retry-After is the least wait", () => {
    expect(backoffDelay(1, 30, () => 1)).toBe(30);
    expect(backoffDelay(8, 5, () => 1)).toBe(60);
  });
});

describe("vpnSyncUnit", () => {
  test("escapes what systemd would expand in the server URL", () => {
    const unit = vpnSyncUnit({
      server: "https://vpn.example.org/a%20b/$HOME",
      iface: "wg1",
      intervalSeconds: null,
      ca: null,
    });
    expect(unit).toContain(
      "ExecStart=/usr/local/bin/bulwark vpn sync --server https://vpn.example.org/a%%20b/$$HOME --api-key-file %d/api-key --interface wg1\n",
    );
    expect(unit).toContain("After=network-online.target wg-quick@wg1.service\n");
  });
});

describe("parseLatestHandshakes", () => {
  test("keeps the peers that have had a handshake, as wg prints them", () => {
    const a = "xTIBA5rboUvnH4htodjb6e697QjLERt1NAB4mZqp8Dg=";
    const b = "TrMvSoP4jYQlY6RIzBgbssQqY3vxI2Pi+y71lOWWXX0=";
    const output = `${a}\t1765142400\n${b}\t0\n\n`;
    expect([...parseLatestHandshakes(output)]).toEqual([[a, 1765142400]]);
  });
});
