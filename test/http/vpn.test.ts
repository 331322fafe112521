/**
 * The WireGuard side of enrollment and the server's export, checked with wireguard-tools: `wg pubkey`
 * must agree with every key pair, and `wg-quick strip` must read both wg-quick files.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { generateWireGuardKeyPair } from "../../src/lib/wireguard";
import { checkIn, createDeviceTestApp, createTestPolicy, enrollDevice } from "../helpers/devices";
import { inProcessTest, type TestApp } from "../helpers/test-app";
import { wgPubkey, wgQuickStrip } from "../helpers/wireguard";

const SERVER_CONFIG = "/api/v1/vpn/server-config";
const t = await createDeviceTestApp();
afterAll(() => t.close());

/** Apps of one organization each, closed at the end. */
const singleApps: TestApp[] = [];
afterAll(async () => {
  for (const app of singleApps) await app.close();
});

async function serverConfig(app: TestApp, adminToken: string) {
  const response = await app.request("GET", SERVER_CONFIG, { token: adminToken });
  expect(response.status).toBe(200);
  return response.body;
}

async function peerIds(adminToken: string): Promise<string[]> {
  return (await serverConfig(t, adminToken)).peers.map((peer: { device_id: string }) => peer.device_id);
}

describe("the enrollment's vpn_config", () => {
  // In-process: the executable creates a first organization of its own at start, and this test needs the
  // installation's only organization, whose admin's export carries the server's private key (the
  // executable's own single organization is covered by test/binary/wireguard-tunnel.test.ts).
  inProcessTest(
    "is a working wg-quick file: its keys agree with `wg pubkey` and the server's export",
    async () => {
      const single = await createDeviceTestApp();
      singleApps.push(single);
      const org = await single.createOrganization();
      const enrolled = await enrollDevice(single, org.adminToken);
      const vpn = enrolled.vpn_config;
      expect(wgPubkey(vpn.private_key ?? "")).toBe(vpn.public_key);

      const [iface, peer, ...rest] = wgQuickStrip(vpn.wg_quick);
      expect(rest).toEqual([]);
      expect(iface).toEqual({ section: "Interface", values: { PrivateKey: vpn.private_key ?? "" } });
      expect(peer).toEqual({
        section: "Peer",
        values: {
          PublicKey: vpn.server_public_key,
          Endpoint: "vpn.example.com:51820",
          AllowedIPs: "10.100.0.0/16",
          PersistentKeepalive: "25",
        },
      });
      // wg-quick's own lines, which strip removed, are in the file too.
      expect(vpn.wg_quick).toContain(`Address = ${vpn.address}\n`);

      const server = await serverConfig(single, org.adminToken);
      expect(server.server_public_key).toBe(vpn.server_public_key);
      expect(server).toMatchObject({ key_managed_by: "bulwark", includes_private_key: true });
      const [serverInterface, ...serverPeers] = wgQuickStrip(server.wg_quick);
      expect(wgPubkey(serverInterface?.values.PrivateKey ?? "")).toBe(vpn.server_public_key);
      expect(serverInterface?.values.ListenPort).toBe("51820");
      expect(server.wg_quick).toContain("Address = 10.100.0.1/16\n");
      expect(serverPeers).toEqual([
        { section: "Peer", values: { PublicKey: vpn.public_key, AllowedIPs: vpn.address } },
      ]);
      expect(server.peers).toEqual([
        {
          device_id: enrolled.id,
          device_name: enrolled.device_name,
          public_key: vpn.public_key,
          allowed_ips: [vpn.address],
        },
      ]);
    },
  );

  test("routes everything through the tunnel when the policy requires the VPN without a split tunnel", async () => {
    const org = await t.createOrganization();
    const fullTunnel = await createTestPolicy(t, org.adminToken, "VPN for all", {
      network: { vpn_required: true, split_tunnel: false },
    } as never);
    const enrolled = await enrollDevice(t, org.adminToken, {}, { policy_id: fullTunnel.id });
    expect(enrolled.vpn_config.allowed_ips).toEqual(["0.0.0.0/0"]);
    expect(wgQuickStrip(enrolled.vpn_config.wg_quick)[1]?.values.AllowedIPs).toBe("0.0.0.0/0");
    const splitTunnel = await createTestPolicy(t, org.adminToken, "VPN, split", {
      network: { vpn_required: true, split_tunnel: true },
    } as never);
    const split = await enrollDevice(t, org.adminToken, {}, { policy_id: splitTunnel.id });
    expect(split.vpn_config.allowed_ips).toEqual(["10.100.0.0/16"]);
  });

  test("with the device's own public key: no private key anywhere, and the file says where it goes", async () => {
    const org = await t.createOrganization();
    const own = generateWireGuardKeyPair();
    const enrolled = await enrollDevice(t, org.adminToken, { public_key: own.publicKey });
    expect(enrolled.vpn_config.private_key).toBeUndefined();
    expect(enrolled.vpn_config.wg_quick).not.toContain(own.privateKey);
    expect(enrolled.vpn_config.wg_quick).toContain(`# PrivateKey = <the private key of ${own.publicKey}`);
    // With the private key put in, it is a complete configuration for that key.
    const completed = enrolled.vpn_config.wg_quick.replace(
      /^# PrivateKey = .*$/m,
      `PrivateKey = ${own.privateKey}`,
    );
    expect(wgPubkey(wgQuickStrip(completed)[0]?.values.PrivateKey ?? "")).toBe(own.publicKey);
  });

  test("the check-in repeats the current peer settings, so that a changed route reaches the device", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken);
    const first = await checkIn(t, enrolled.device_token);
    const { private_key: _, wg_quick: __, ...settings } = enrolled.vpn_config;
    expect(first.body.vpn_config).toEqual(settings);

    const policy = await createTestPolicy(t, org.adminToken, "Full tunnel", {
      network: { vpn_required: true, split_tunnel: false },
    } as never);
    await t.request("PUT", `/api/v1/devices/${enrolled.id}/policy`, {
      token: org.adminToken,
      body: { policy_id: policy.id },
    });
    expect((await checkIn(t, enrolled.device_token)).body.vpn_config.allowed_ips).toEqual(["0.0.0.0/0"]);
  });
});

describe("GET /vpn/server-config", () => {
  test("lists the devices that may use the tunnel, changing at once with their lifecycle", async () => {
    const org = await t.createOrganization();
    const other = await t.createOrganization();
    const kept = await enrollDevice(t, org.adminToken);
    const suspended = await enrollDevice(t, org.adminToken);
    const wiped = await enrollDevice(t, org.adminToken);
    await enrollDevice(t, other.adminToken);
    expect((await peerIds(org.adminToken)).sort()).toEqual([kept.id, suspended.id, wiped.id].sort());

    const device = (id: string) => `/api/v1/devices/${id}`;
    await t.request("PUT", `${device(suspended.id)}/status`, {
      token: org.adminToken,
      body: { status: "suspended", reason: "investigation" },
    });
    expect((await peerIds(org.adminToken)).sort()).toEqual([kept.id, wiped.id].sort());
    await t.request("PUT", `${device(suspended.id)}/status`, {
      token: org.adminToken,
      body: { status: "online" },
    });
    expect(await peerIds(org.adminToken)).toContain(suspended.id);

    const wipe = await t.request("POST", `${device(wiped.id)}/wipe`, {
      token: org.adminToken,
      body: { reason: "lost" },
    });
    // A pending wipe keeps the tunnel: the agent still has to hear the command.
    expect(await peerIds(org.adminToken)).toContain(wiped.id);
    await t.request("POST", `/api/v1/agent/wipes/${wipe.body.wipe_id}/complete`, {
      token: wiped.device_token,
      body: { success: true },
    });
    expect(await peerIds(org.adminToken)).not.toContain(wiped.id);
    expect((await t.request("DELETE", device(wiped.id), { token: org.adminToken })).status).toBe(204);
    const server = await serverConfig(t, org.adminToken);
    expect(server.peers.map((peer: { device_id: string }) => peer.device_id).sort()).toEqual(
      [kept.id, suspended.id].sort(),
    );
    expect(server.wg_quick.match(/^\[Peer\]$/gm)).toHaveLength(2);
  });

  test("is for administrators, and audited", async () => {
    const org = await t.createOrganization();
    const operator = await t.createUser(org.adminToken, "operator");
    const refused = await t.request("GET", SERVER_CONFIG, { token: operator.token });
    expect(refused.status).toBe(403);
    await serverConfig(t, org.adminToken);
    const audit = await t.request("GET", "/api/v1/audit-logs?action=vpn.server_config_export", {
      token: org.adminToken,
    });
    expect(audit.body.data[0]).toMatchObject({ action: "vpn.server_config_export", details: { peers: 0 } });
  });

  test("with several organizations, no organization's admin gets the server's private key", async () => {
    // One server serves them all: its key would let one tenant impersonate it to the others' devices.
    const org = await t.createOrganization();
    await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken);
    const server = await serverConfig(t, org.adminToken);
    expect(server).toMatchObject({ key_managed_by: "bulwark", includes_private_key: false });
    const [iface, ...peers] = wgQuickStrip(server.wg_quick);
    expect(iface?.values).toEqual({ ListenPort: "51820" });
    expect(server.wg_quick).toContain("`bulwark vpn server-config`");
    expect(peers).toEqual([
      {
        section: "Peer",
        values: { PublicKey: enrolled.vpn_config.public_key, AllowedIPs: enrolled.vpn_config.address },
      },
    ]);
  });

  test("with vpn.server_public_key, the operator's server keeps its key: it is used and never invented", async () => {
    const external = generateWireGuardKeyPair();
    const app = await createDeviceTestApp({
      vpn: {
        server_public_key: external.publicKey,
        endpoint: "[2001:db8::1]:443",
        dns: ["10.100.0.1", "corp.example"],
        allowed_ips: ["10.0.0.0/8", "2001:db8::/32"],
        persistent_keepalive: 0,
      },
    });
    try {
      const org = await app.createOrganization();
      const enrolled = await enrollDevice(app, org.adminToken);
      expect(enrolled.vpn_config).toMatchObject({
        server_public_key: external.publicKey,
        endpoint: "[2001:db8::1]:443",
        dns: ["10.100.0.1", "corp.example"],
        allowed_ips: ["10.0.0.0/8", "2001:db8::/32"],
        persistent_keepalive: 0,
      });
      const [, peer] = wgQuickStrip(enrolled.vpn_config.wg_quick);
      expect(peer?.values).toEqual({
        PublicKey: external.publicKey,
        Endpoint: "[2001:db8::1]:443",
        AllowedIPs: "10.0.0.0/8, 2001:db8::/32",
      });
      expect(enrolled.vpn_config.wg_quick).toContain("DNS = 10.100.0.1, corp.example\n");
      const server = await serverConfig(app, org.adminToken);
      expect(server).toMatchObject({ key_managed_by: "operator", listen_port: 443 });
      expect(wgQuickStrip(server.wg_quick)[0]?.values).toEqual({ ListenPort: "443" });
      expect(server.wg_quick).toContain(`# PrivateKey = <the private key of ${external.publicKey}`);
    } finally {
      await app.close();
    }
  });
});
