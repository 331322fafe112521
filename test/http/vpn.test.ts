/**
 * The WireGuard side of enrollment and the server's export, checked with wireguard-tools: `wg pubkey`
 * must agree with every key pair, and `wg-quick strip` must read both wg-quick files.
 */

import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { eq } from "drizzle-orm";
import { withTransaction } from "../../src/db/client";
import { devices, organizations } from "../../src/db/tables";
import { systemActor } from "../../src/domain/deps";
import { vpnServerConfig } from "../../src/domain/vpn/vpn-server-config";
import { parseIpv4 } from "../../src/lib/ipv4";
import { generateWireGuardKeyPair } from "../../src/lib/wireguard";
import {
  checkIn,
  createDeviceTestApp,
  createTestPolicy,
  type Enrolled,
  enrollDevice,
} from "../helpers/devices";
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

/** A fresh app whose one organization, the installation's only one, has one device enrolled. */
async function onlyOrganization() {
  const app = await createDeviceTestApp();
  singleApps.push(app);
  const org = await app.createOrganization();
  return { app, org, enrolled: await enrollDevice(app, org.adminToken) };
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
      const { app: single, org, enrolled } = await onlyOrganization();
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
          // The organization's subnet (test apps use /22s), which holds the server's address too.
          AllowedIPs: "10.100.0.0/22",
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
    const plain = await enrollDevice(t, org.adminToken);
    expect(split.vpn_config.allowed_ips).toEqual(plain.vpn_config.allowed_ips);
    expect(split.vpn_config.allowed_ips).not.toContain("0.0.0.0/0");
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

/** Whether `address` (a.b.c.d or a.b.c.d/32) lies in `cidr`, computed here apart from the server's code. */
function isInside(address: string, cidr: string): boolean {
  const [network, length] = cidr.split("/");
  const host = parseIpv4(address.replace(/\/32$/, "")) ?? -1;
  const base = parseIpv4(network ?? "") ?? -2;
  const size = 2 ** (32 - Number(length));
  return base % size === 0 && host >= base && host < base + size;
}

/** The check-in's peer settings are the enrollment's, without the private key and the file. */
function peerSettings(enrolled: Enrolled) {
  const { private_key: _, wg_quick: __, ...settings } = enrolled.vpn_config;
  return settings;
}

describe("each organization's own subnet of the pool", () => {
  test("holds its devices' addresses and is what they route, with the server's address; enrollment, check-in, wg_quick and the export agree", async () => {
    // The default length: a /16 pool makes 16 organizations of 4,094 devices.
    const app = await createDeviceTestApp({ vpn: { organization_prefix_length: 20 } });
    singleApps.push(app);
    const a = await app.createOrganization();
    const b = await app.createOrganization();
    const a1 = await enrollDevice(app, a.adminToken);
    const b1 = await enrollDevice(app, b.adminToken);
    const a2 = await enrollDevice(app, a.adminToken);
    const subnetA = a1.vpn_config.allowed_ips[0] ?? "";
    const subnetB = b1.vpn_config.allowed_ips[0] ?? "";
    expect(subnetA).toMatch(/^10\.100\.\d+\.0\/20$/);
    expect(subnetB).toMatch(/^10\.100\.\d+\.0\/20$/);
    expect(subnetA).not.toBe(subnetB);
    for (const [device, subnet] of [
      [a1, subnetA],
      [a2, subnetA],
      [b1, subnetB],
    ] as const) {
      expect(isInside(device.vpn_config.address, subnet)).toBe(true);
      // The server (the pool's first host) is reached through the tunnel, inside the subnet or not.
      expect(device.vpn_config.allowed_ips).toEqual(
        isInside("10.100.0.1", subnet) ? [subnet] : [subnet, "10.100.0.1/32"],
      );
      expect(wgQuickStrip(device.vpn_config.wg_quick)[1]?.values.AllowedIPs).toBe(
        device.vpn_config.allowed_ips.join(", "),
      );
      expect((await checkIn(app, device.device_token)).body.vpn_config).toEqual(peerSettings(device));
    }
    if (app.target === "in-process") {
      // The first organization has the pool's first block, but not the server's address in it.
      expect([subnetA, a1.vpn_config.address, a2.vpn_config.address]).toEqual([
        "10.100.0.0/20",
        "10.100.0.2/32",
        "10.100.0.3/32",
      ]);
      expect([subnetB, b1.vpn_config.address]).toEqual(["10.100.16.0/20", "10.100.16.1/32"]);
    }

    const exported = await serverConfig(app, a.adminToken);
    expect(exported.organization_subnets).toEqual([subnetA]);
    expect(exported.address).toBe("10.100.0.1/16");
    const postUp = /^PostUp = (.*)$/m.exec(exported.wg_quick)?.[1] ?? "";
    expect(postUp).toContain(`iifname "%i" ip saddr ${subnetA} ip daddr ${subnetA} accept;`);
    expect(postUp).toContain('iifname "%i" ip saddr 10.100.0.0/16 ip daddr 10.100.0.0/16 drop;');
    expect(postUp).not.toContain(subnetB);
    expect(exported.wg_quick).toContain("\nPostDown = nft delete table inet bulwark_%i\n");
    // wg-quick reads the file; what it hands to wg has no hooks.
    expect(wgQuickStrip(exported.wg_quick)[0]?.values).not.toHaveProperty("PostUp");
  });

  test("a new organization is refused, naming the key, when every subnet of the pool is taken", async () => {
    const app = await createDeviceTestApp({
      vpn: { address_pool: "10.9.0.0/24", organization_prefix_length: 25 },
    });
    singleApps.push(app);
    const made = [];
    let failure: unknown;
    for (let attempt = 0; attempt < 3 && failure === undefined; attempt++) {
      try {
        made.push(await app.createOrganization());
      } catch (error) {
        failure = error;
      }
    }
    // Two /25s; the executable's first run took one for an organization of its own.
    expect(made).toHaveLength(app.target === "executable" ? 1 : 2);
    const said = `${(failure as Error).message} ${(failure as { details?: string }).details ?? ""}`;
    expect(said).toContain("vpn.organization_prefix_length");
    expect(said).toContain("10.9.0.0/24");
  });

  inProcessTest(
    "at start, organizations without one get a subnet, and devices outside it a new address that their check-in carries",
    async () => {
      const folder = mkdtempSync(join(tmpdir(), "bulwark-subnets-"));
      const path = join(folder, "bulwark.db");
      const settings = { database: { path }, vpn: { organization_prefix_length: 20 } };
      try {
        let app = await createDeviceTestApp(settings);
        const a = await app.createOrganization();
        const b = await app.createOrganization();
        const a1 = await enrollDevice(app, a.adminToken);
        const b1 = await enrollDevice(app, b.adminToken);
        const a2 = await enrollDevice(app, a.adminToken);
        // As a version before subnets left it: no subnets, addresses from the whole pool in turn.
        await withTransaction(app.deps.db, async (tx) => {
          await tx.update(organizations).set({ vpnSubnet: null });
          const setAddress = (address: string, id: string) =>
            tx
              .update(devices)
              .set({ vpnAddress: parseIpv4(address) })
              .where(eq(devices.id, id));
          await setAddress("10.100.0.4", a2.id);
          await setAddress("10.100.0.3", b1.id);
        });
        await app.close();

        /** Starts on the database again with these VPN settings; the devices' check-in settings. */
        const startAgain = async (vpn: { address_pool?: string; organization_prefix_length: number }) => {
          app = await createDeviceTestApp({ database: { path }, vpn });
          return Promise.all(
            [a1, a2, b1].map(async (device) => (await checkIn(app, device.device_token)).body.vpn_config),
          );
        };
        const addresses = (settled: { address: string }[]) => settled.map((peer) => peer.address);
        const settled = await startAgain(settings.vpn);
        expect(addresses(settled)).toEqual(["10.100.0.2/32", "10.100.0.4/32", "10.100.16.1/32"]);
        expect(settled[0]?.allowed_ips).toEqual(["10.100.0.0/20"]);
        expect(settled[2]?.allowed_ips).toEqual(["10.100.16.0/20", "10.100.0.1/32"]);
        const logs = await app.request("GET", `/api/v1/devices/${b1.id}/logs?event=device.vpn_readdressed`, {
          token: (await app.signIn(b.adminEmail)).token,
        });
        expect(logs.body.data.map((entry: { details: unknown }) => entry.details)).toEqual([
          { from: "10.100.0.3", to: "10.100.16.1", subnet: "10.100.16.0/20" },
        ]);
        const exported = await vpnServerConfig(app.deps, systemActor(), "installation");
        expect(exported.organization_subnets).toEqual(["10.100.0.0/20", "10.100.16.0/20"]);
        expect(exported.peers.find((peer) => peer.device_id === b1.id)?.allowed_ips).toEqual([
          "10.100.16.1/32",
        ]);
        await app.close();

        // Nothing to do the next time: the same addresses, no new audit entry.
        expect(addresses(await startAgain(settings.vpn))).toEqual(addresses(settled));
        const audit = await app.request("GET", "/api/v1/audit-logs?action=organization.vpn_subnet_assigned", {
          token: (await app.signIn(b.adminEmail)).token,
        });
        expect(audit.body.data.map((entry: { details: unknown }) => entry.details)).toEqual([
          { vpn_subnet: "10.100.16.0/20", previous_vpn_subnet: null, devices_readdressed: 1 },
        ]);
        await app.close();

        // A new pool moves every organization and device.
        const moving = { address_pool: "10.200.0.0/16", organization_prefix_length: 20 };
        const moved = addresses(await startAgain(moving));
        expect(moved).toEqual(["10.200.0.2/32", "10.200.0.3/32", "10.200.16.1/32"]);
        await app.close();

        // Too few subnets for the organizations: the start stops, naming the key, and changes nothing.
        const crowded = { database: { path }, vpn: { ...moving, organization_prefix_length: 16 } };
        await expect(createDeviceTestApp(crowded)).rejects.toMatchObject({
          reason: "vpn_pool_misconfigured",
          details: expect.stringContaining("vpn.organization_prefix_length"),
        });
        expect(addresses(await startAgain(moving))).toEqual(moved);
        await app.close();
      } finally {
        rmSync(folder, { recursive: true, force: true });
      }
    },
  );
});

describe("the server's key pair", () => {
  // In-process: this needs the installation's only organization (the executable makes one of its own
  // at start; test/binary/wireguard-tunnel.test.ts covers it with `bulwark admin create`).
  inProcessTest(
    "is replaced when the second organization is created: the first one's devices learn it at their next check-in, its admin loses the private key",
    async () => {
      const { app, org: first, enrolled: device } = await onlyOrganization();
      const before = await serverConfig(app, first.adminToken);
      expect(before.includes_private_key).toBe(true);
      const oldKey = before.server_public_key;
      expect(device.vpn_config.server_public_key).toBe(oldKey);

      await app.createOrganization();
      const newKey = (await checkIn(app, device.device_token)).body.vpn_config.server_public_key;
      expect(newKey).not.toBe(oldKey);
      const after = await serverConfig(app, first.adminToken);
      expect(after).toMatchObject({ server_public_key: newKey, includes_private_key: false });
      expect(after.wg_quick).not.toMatch(/^PrivateKey = /m);
      // The operator's export carries the new private key.
      const operator = await vpnServerConfig(app.deps, systemActor(), "installation");
      expect(wgPubkey(/^PrivateKey = (\S+)$/m.exec(operator.wg_quick)?.[1] ?? "")).toBe(newKey);
      const audit = await app.request("GET", "/api/v1/audit-logs?action=vpn.server_key_rotated", {
        token: first.adminToken,
      });
      expect(audit.body.data).toHaveLength(1);
      expect(audit.body.data[0].details).toMatchObject({ previous_public_key: oldKey, public_key: newKey });

      // No admin has seen this one: a third organization keeps it.
      await app.createOrganization();
      expect((await checkIn(app, device.device_token)).body.vpn_config.server_public_key).toBe(newKey);
    },
  );
});
