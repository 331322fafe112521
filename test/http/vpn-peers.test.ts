/**
 * GET /vpn/peers: the VPN server's peer list that `bulwark vpn sync` polls. A key with only the vpn:read
 * scope reads it and nothing else; it never carries a private key; its ETag makes an unchanged list a
 * 304 without a body, and any change (enrollment, suspension, retirement) a new version.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { createDeviceTestApp, enrollDevice } from "../helpers/devices";

const PEERS = "/api/v1/vpn/peers";
const t = await createDeviceTestApp();
afterAll(() => t.close());

describe("GET /vpn/peers", () => {
  test("a key with only vpn:read reads the organization's peers, and nothing else", async () => {
    const org = await t.createOrganization();
    const other = await t.createOrganization();
    const mine = await enrollDevice(t, org.adminToken);
    await enrollDevice(t, other.adminToken);
    const key = await t.createApiKey(org.adminToken, ["vpn:read"]);

    const response = await t.request("GET", PEERS, { token: key });
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      version: expect.stringMatching(/^[A-Za-z0-9_-]{22}$/),
      server_public_key: mine.vpn_config.server_public_key,
      address: "10.100.0.1/16",
      listen_port: 51820,
      peers: [
        {
          device_id: mine.id,
          device_name: mine.device_name,
          public_key: mine.vpn_config.public_key,
          allowed_ips: [mine.vpn_config.address],
        },
      ],
    });
    expect(response.headers.get("etag")).toBe(`"${response.body.version}"`);
    expect(JSON.stringify(response.body)).not.toContain("private");

    // Everything else is closed to it, reads included.
    for (const path of [
      "/api/v1/devices",
      `/api/v1/devices/${mine.id}`,
      "/api/v1/vpn/settings",
      "/api/v1/vpn/server-config",
      "/api/v1/policies",
      "/api/v1/users",
      "/api/v1/audit-logs",
      "/api/v1/enrollment-tokens",
      "/api/v1/webhooks",
    ]) {
      const refused = await t.request("GET", path, { token: key });
      expect({ path, status: refused.status, reason: refused.body.reason }).toEqual({
        path,
        status: 403,
        reason: "scope_missing",
      });
    }
  });

  test("without vpn:read: 403 naming the scope, for keys and roles alike; admins may read it", async () => {
    const org = await t.createOrganization();
    const readKey = await t.createApiKey(org.adminToken, ["devices:read", "devices:write", "audit:read"]);
    const operator = await t.createUser(org.adminToken, "operator");
    const auditor = await t.createUser(org.adminToken, "auditor");
    for (const token of [readKey, operator.token, auditor.token]) {
      const refused = await t.request("GET", PEERS, { token });
      expect(refused.status).toBe(403);
      expect(refused.body.reason).toBe("scope_missing");
      expect(refused.body.details).toContain("vpn:read");
    }
    expect((await t.request("GET", PEERS, { token: org.adminToken })).status).toBe(200);
    expect((await t.request("GET", PEERS)).status).toBe(401);
  });

  test("only an admin can create a vpn:read key: the scope is wider than an operator's", async () => {
    const org = await t.createOrganization();
    const operator = await t.createUser(org.adminToken, "operator");
    const refused = await t.request("POST", "/api/v1/auth/api-keys", {
      token: operator.token,
      body: { name: "vpn host", scopes: ["vpn:read"] },
    });
    expect(refused.status).toBe(403);
    expect(refused.body.details).toContain("vpn:read");
  });

  test("If-None-Match with the current version is a 304 without a body; a change makes a new version", async () => {
    const org = await t.createOrganization();
    const key = await t.createApiKey(org.adminToken, ["vpn:read"]);
    const read = (etag?: string) =>
      t.request("GET", PEERS, { token: key, headers: etag ? { "if-none-match": etag } : {} });

    const empty = await read();
    expect(empty.body.peers).toEqual([]);
    const unchanged = await read(empty.headers.get("etag") ?? "");
    expect(unchanged.status).toBe(304);
    expect(unchanged.body).toBeNull();
    expect(unchanged.headers.get("etag")).toBe(empty.headers.get("etag"));
    expect(unchanged.headers.get("x-ratelimit-limit")).not.toBeNull();
    // A list of versions, and the weak form, are understood too.
    expect((await read(`"other", W/${empty.headers.get("etag")}`)).status).toBe(304);

    const laptop = await enrollDevice(t, org.adminToken);
    const enrolled = await read(empty.headers.get("etag") ?? "");
    expect(enrolled.status).toBe(200);
    expect(enrolled.body.peers.map((peer: { device_id: string }) => peer.device_id)).toEqual([laptop.id]);
    expect(enrolled.body.version).not.toBe(empty.body.version);

    await t.request("PUT", `/api/v1/devices/${laptop.id}/status`, {
      token: org.adminToken,
      body: { status: "suspended", reason: "investigation" },
    });
    const suspended = await read(enrolled.headers.get("etag") ?? "");
    expect(suspended.status).toBe(200);
    expect(suspended.body.peers).toEqual([]);
    // The same list as before enrollment: the same version.
    expect(suspended.body.version).toBe(empty.body.version);

    await t.request("PUT", `/api/v1/devices/${laptop.id}/status`, {
      token: org.adminToken,
      body: { status: "online" },
    });
    const back = await read(suspended.headers.get("etag") ?? "");
    expect(back.body.version).toBe(enrolled.body.version);
    const retired = await t.request("POST", `/api/v1/devices/${laptop.id}/retire`, {
      token: org.adminToken,
      body: { reason: "stolen" },
    });
    expect(retired.status).toBe(200);
    const gone = await read(back.headers.get("etag") ?? "");
    expect(gone.status).toBe(200);
    expect(gone.body.peers).toEqual([]);
  });

  test("reading it leaves no audit entry (the server export's is kept for the private key)", async () => {
    const org = await t.createOrganization();
    const key = await t.createApiKey(org.adminToken, ["vpn:read"]);
    expect((await t.request("GET", PEERS, { token: key })).status).toBe(200);
    const audit = await t.request("GET", "/api/v1/audit-logs?action=vpn.server_config_export", {
      token: org.adminToken,
    });
    expect(audit.status).toBe(200);
    expect(audit.body.data).toEqual([]);
  });
});
