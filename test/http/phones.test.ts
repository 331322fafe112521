/**
 * Phones without an agent (issue 42): an iPhone's signed configuration profile and an Android phone's QR
 * code, each checked by counterparts nobody here wrote: `openssl smime -verify` against the
 * organization's CA, Python's plistlib and Apple's published profile schema, `wg-quick strip` and
 * `wg pubkey` for the tunnel inside, `zbarimg` for the QR code.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { parsePlistWithPython, plain, profileSchemaProblems } from "../helpers/apple-profile-schema";
import { createDeviceTestApp, createTestPolicy, enrollDevice } from "../helpers/devices";
import type { TestApp } from "../helpers/test-app";
import { wgPubkey, wgQuickStrip } from "../helpers/wireguard";

const t = await createDeviceTestApp();
afterAll(() => t.close());

const PHONES = "/api/v1/devices/phones";

// biome-ignore lint/suspicious/noExplicitAny: property lists as plistlib read them, checked field by field
type Parsed = any;

async function caPem(organizationId: string): Promise<string> {
  const response = await t.fetch(`/api/v1/agent/ca.pem?organization_id=${organizationId}`, {});
  expect(response.status).toBe(200);
  return await response.text();
}

/** `openssl smime -verify` of a DER profile against `ca`: the signed content, or the failure. */
function opensslVerify(profile: Uint8Array, ca: string): { ok: boolean; content: Buffer; stderr: string } {
  const folder = mkdtempSync(join(tmpdir(), "bulwark-profile-"));
  try {
    writeFileSync(join(folder, "profile.der"), profile);
    writeFileSync(join(folder, "ca.pem"), ca);
    const run = Bun.spawnSync(
      [
        "openssl",
        "smime",
        "-verify",
        "-inform",
        "DER",
        "-in",
        "profile.der",
        "-CAfile",
        "ca.pem",
        "-out",
        "out",
      ],
      { cwd: folder, stdout: "pipe", stderr: "pipe" },
    );
    const ok = run.exitCode === 0;
    return {
      ok,
      content: ok ? readFileSync(join(folder, "out")) : Buffer.alloc(0),
      stderr: run.stderr.toString(),
    };
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** The QR code (SVG) read back by zbarimg. */
function scanQr(svg: string): string {
  const folder = mkdtempSync(join(tmpdir(), "bulwark-qr-"));
  try {
    writeFileSync(join(folder, "code.svg"), svg);
    const run = Bun.spawnSync(["zbarimg", "--raw", "-q", join(folder, "code.svg")], {
      stdout: "pipe",
      stderr: "pipe",
    });
    if (run.exitCode !== 0) throw new Error(`zbarimg read nothing: ${run.stderr.toString()}`);
    return run.stdout.toString().replace(/\n$/, "");
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

/** What the page's button fetches: the profile, using the link up. */
async function fetchLink(app: TestApp, url: string) {
  const { pathname } = new URL(url, "http://localhost");
  const response = await app.fetch(`${pathname}?install=1`, {});
  return {
    status: response.status,
    type: response.headers.get("content-type"),
    body: new Uint8Array(await response.arrayBuffer()),
    headers: response.headers,
  };
}

describe("an iPhone added with a key the server makes", () => {
  test("its one-time link serves a profile signed by the organization's CA, valid against Apple's schema, with a working tunnel, once", async () => {
    const org = await t.createOrganization("Acme & Sons <HQ>");
    const policy = await createTestPolicy(t, org.adminToken, "Phones", {
      network: { vpn_required: true, vpn_always_on: true },
      storage: { encryption_required: true },
      dlp: { screenshot_allowed: false },
    } as never);
    const added = await t.request("POST", PHONES, {
      token: org.adminToken,
      body: { device_name: "Ana's iPhone", platform: "ios", policy_id: policy.id },
    });
    expect(added.status).toBe(201);
    const device = added.body.device;
    expect(device).toMatchObject({
      platform: "ios",
      status: "pending",
      compliance: { status: "unknown", violations: [] },
      facts: null,
      enforcement: null,
      vpn_profile: {
        key_made_by: "server",
        key_held_until: expect.any(String),
        profile_fetched_at: null,
        profile_payloads: [
          { type: "com.apple.vpn.managed", description: expect.stringContaining("switch locked") },
          { type: "com.apple.mobiledevice.passwordpolicy", description: expect.any(String) },
          { type: "com.apple.applicationaccess", description: expect.any(String) },
        ],
      },
    });
    expect(JSON.stringify(added.body)).not.toContain('private_key"');
    const link = added.body.profile_link;
    expect(link.url).toMatch(/\/api\/v1\/phone-profiles\/bwp_[A-Za-z0-9_-]{43}$/);

    // Opening the link (a phone's camera, a link checker, a chat's preview: GET or HEAD) shows a page
    // and uses nothing up.
    const { pathname } = new URL(link.url, "http://localhost");
    const head = await t.fetch(pathname, { method: "HEAD" });
    expect(head.status).toBe(200);
    for (let view = 0; view < 2; view++) {
      const page = await t.fetch(pathname, { headers: { accept: "text/html" } });
      expect(page.status).toBe(200);
      expect(page.headers.get("content-type")).toBe("text/html; charset=utf-8");
      expect(page.headers.get("content-security-policy")).toContain("default-src 'none'");
      const html = await page.text();
      expect(html).toContain("Acme &amp; Sons &lt;HQ&gt;: Ana's iPhone");
      expect(html).toContain('href="?install=1"');
    }
    // The page's button: no sign-in, a signed profile Safari hands to Settings.
    const fetched = await fetchLink(t, link.url);
    expect(fetched.status).toBe(200);
    expect(fetched.type).toBe("application/x-apple-aspen-config");
    expect(fetched.headers.get("content-disposition")).toBe(
      'attachment; filename="Ana-s-iPhone.mobileconfig"',
    );

    const ca = await caPem(org.organizationId);
    const verified = opensslVerify(fetched.body, ca);
    expect(verified.stderr).toContain("Verification successful");
    expect(verified.ok).toBe(true);

    // The same bytes with one byte of the content changed no longer verify: the check can fail.
    const tampered = Uint8Array.from(fetched.body);
    const at = Buffer.from(tampered).indexOf("allowScreenShot");
    tampered[at] = "A".charCodeAt(0);
    expect(opensslVerify(tampered, ca).ok).toBe(false);

    const profile = parsePlistWithPython(verified.content);
    expect(profileSchemaProblems(profile)).toEqual([]);
    const content = plain(profile) as Parsed;
    expect(content.PayloadOrganization).toBe("Acme & Sons <HQ>");
    const payloads = content.PayloadContent as Parsed[];
    expect(payloads.map((payload) => payload.PayloadType)).toEqual([
      "com.apple.vpn.managed",
      "com.apple.mobiledevice.passwordpolicy",
      "com.apple.applicationaccess",
    ]);
    const [vpn, passcode, restrictions] = payloads;
    expect(vpn).toMatchObject({
      VPNType: "VPN",
      VPNSubType: "com.wireguard.ios",
      VPN: {
        AuthenticationMethod: "Password",
        OnDemandEnabled: 1,
        OnDemandRules: [{ Action: "Connect" }],
        OnDemandUserOverrideDisabled: 1,
      },
    });
    expect(passcode).toMatchObject({ forcePIN: true, allowSimple: false, minLength: 6 });
    expect(restrictions).toMatchObject({ allowScreenShot: false });

    // The tunnel inside, read the way wg-quick reads it: the key pair is the device's, the peer the server.
    const tunnel = wgQuickStrip(vpn?.VendorConfig.WgQuickConfig);
    const privateKey = tunnel.find((section) => section.section === "Interface")?.values.PrivateKey ?? "";
    expect(wgPubkey(privateKey)).toBe(device.vpn_public_key);
    const server = await t.request("GET", "/api/v1/vpn/server-config", { token: org.adminToken });
    expect(tunnel.find((section) => section.section === "Peer")?.values.PublicKey).toBe(
      server.body.server_public_key,
    );
    expect(server.body.peers.map((peer: { public_key: string }) => peer.public_key)).toContain(
      device.vpn_public_key,
    );

    // Once: the link is used up and the server's copy of the key is gone.
    const again = await fetchLink(t, link.url);
    expect(again.status).toBe(404);
    expect(JSON.parse(Buffer.from(again.body).toString()).reason).toBe("profile_link_not_found");
    const gonePage = await t.fetch(pathname, { headers: { accept: "text/html" } });
    expect(gonePage.status).toBe(404);
    expect((await gonePage.json()).details).toContain("ask your administrator for a new one");
    const after = await t.request("GET", `/api/v1/devices/${device.id}`, { token: org.adminToken });
    expect(after.body.vpn_profile).toMatchObject({
      key_held_until: null,
      profile_fetched_at: expect.any(String),
      delivered: {
        policy_id: policy.id,
        policy_version: policy.version,
        payloads: device.vpn_profile.profile_payloads,
      },
      profile_out_of_date: false,
    });
    expect(after.body.status).toBe("pending");
    const config = await t.request("GET", `/api/v1/devices/${device.id}/vpn-config`, {
      token: org.adminToken,
    });
    expect(config.status).toBe(409);
    expect(config.body.reason).toBe("vpn_key_not_held");
    const link2 = await t.request("POST", `/api/v1/devices/${device.id}/profile-link`, {
      token: org.adminToken,
    });
    expect(link2.body.reason).toBe("vpn_key_not_held");

    // A new key: the old one leaves the peers at once, and a new link delivers the new key.
    const rotated = await t.request("POST", `/api/v1/devices/${device.id}/vpn-key`, {
      token: org.adminToken,
      body: {},
    });
    expect(rotated.status).toBe(200);
    expect(rotated.body.device.vpn_public_key).not.toBe(device.vpn_public_key);
    const peers = await t.request("GET", "/api/v1/vpn/server-config", { token: org.adminToken });
    const keys = peers.body.peers.map((peer: { public_key: string }) => peer.public_key);
    expect(keys).not.toContain(device.vpn_public_key);
    expect(keys).toContain(rotated.body.device.vpn_public_key);
    const second = await fetchLink(t, rotated.body.profile_link.url);
    expect(second.status).toBe(200);
    const secondVpn = (plain(parsePlistWithPython(opensslVerify(second.body, ca).content)) as Parsed)
      .PayloadContent[0];
    const secondKey = wgQuickStrip(secondVpn.VendorConfig.WgQuickConfig)[0]?.values.PrivateKey ?? "";
    expect(wgPubkey(secondKey)).toBe(rotated.body.device.vpn_public_key);
    // The same identifiers: installing it replaces the first profile instead of adding another.
    expect(secondVpn.PayloadIdentifier).toBe(vpn?.PayloadIdentifier);

    // The policy allows screenshots now: the installed profile still forbids them, and the device says so.
    const changed = await t.request("PUT", `/api/v1/policies/${policy.id}`, {
      token: org.adminToken,
      body: { policy_data: { dlp: { screenshot_allowed: true } } },
    });
    expect(changed.status).toBe(200);
    const stale = (await t.request("GET", `/api/v1/devices/${device.id}`, { token: org.adminToken })).body;
    expect(stale.vpn_profile.profile_out_of_date).toBe(true);
    expect(stale.vpn_profile.delivered.payloads.map((payload: { type: string }) => payload.type)).toContain(
      "com.apple.applicationaccess",
    );
    expect(stale.vpn_profile.profile_payloads.map((payload: { type: string }) => payload.type)).not.toContain(
      "com.apple.applicationaccess",
    );

    const audit = await t.request("GET", "/api/v1/audit-logs?page_size=100", { token: org.adminToken });
    const actions = audit.body.data.map((entry: { action: string }) => entry.action);
    expect(actions).toEqual(
      expect.arrayContaining(["device.add_phone", "device.profile_fetch", "device.vpn_key"]),
    );
  }, 30_000);

  test("a policy without those settings makes a profile with the tunnel alone; an administrator's download keeps the key held", async () => {
    const org = await t.createOrganization();
    const policy = await createTestPolicy(t, org.adminToken, "Tunnel only", {
      storage: { encryption_required: false },
      network: { vpn_required: false, vpn_always_on: false },
    } as never);
    const added = await t.request("POST", PHONES, {
      token: org.adminToken,
      body: { device_name: "Plain iPhone", platform: "ios", policy_id: policy.id },
    });
    expect(added.status).toBe(201);
    const id = added.body.device.id;
    const download = await t.fetch(`/api/v1/devices/${id}/profile`, {
      headers: { authorization: `Bearer ${org.adminToken}` },
    });
    expect(download.status).toBe(200);
    const verified = opensslVerify(
      new Uint8Array(await download.arrayBuffer()),
      await caPem(org.organizationId),
    );
    expect(verified.ok).toBe(true);
    const profile = parsePlistWithPython(verified.content);
    expect(profileSchemaProblems(profile)).toEqual([]);
    const payloads = (plain(profile) as Parsed).PayloadContent;
    expect(payloads.map((payload: { PayloadType: string }) => payload.PayloadType)).toEqual([
      "com.apple.vpn.managed",
    ]);
    expect(payloads[0].VPN.OnDemandEnabled).toBeUndefined();
    // Still held: the phone's own link works after the administrator's download.
    expect((await fetchLink(t, added.body.profile_link.url)).status).toBe(200);
  });
});

describe("a phone that made its own key", () => {
  test("the server never holds a private key: the profile carries no tunnel, and the text says where the key goes", async () => {
    const org = await t.createOrganization();
    const privateKey = Bun.spawnSync(["wg", "genkey"]).stdout.toString().trim();
    const publicKey = wgPubkey(privateKey);
    const added = await t.request("POST", PHONES, {
      token: org.adminToken,
      body: { device_name: "Own-key iPhone", platform: "ios", public_key: publicKey },
    });
    expect(added.status).toBe(201);
    expect(added.body.device).toMatchObject({
      vpn_public_key: publicKey,
      vpn_profile: {
        key_made_by: "phone",
        key_held_until: null,
        // The default policy requires encryption: a passcode, and no tunnel (the key is the phone's).
        profile_payloads: [
          { type: "com.apple.mobiledevice.passwordpolicy", description: expect.any(String) },
        ],
      },
    });
    const config = await t.request("GET", `/api/v1/devices/${added.body.device.id}/vpn-config`, {
      token: org.adminToken,
    });
    expect(config.status).toBe(200);
    expect(config.body.private_key_included).toBe(false);
    expect(config.body.qr_svg).toBeNull();
    expect(config.body.wg_quick).toContain(`PrivateKey = <the private key of ${publicKey}`);
    const fetched = await fetchLink(t, added.body.profile_link.url);
    expect(fetched.status).toBe(200);
    const profile = parsePlistWithPython(
      opensslVerify(fetched.body, await caPem(org.organizationId)).content,
    );
    expect(profileSchemaProblems(profile)).toEqual([]);
    expect(
      (plain(profile) as Parsed).PayloadContent.map(
        (payload: { PayloadType: string }) => payload.PayloadType,
      ),
    ).toEqual(["com.apple.mobiledevice.passwordpolicy"]);

    // A key another device holds is refused.
    const again = await t.request("POST", PHONES, {
      token: org.adminToken,
      body: { device_name: "Copy", platform: "android", public_key: publicKey },
    });
    expect(again.status).toBe(409);
    expect(again.body.reason).toBe("public_key_taken");
  });
});

describe("an Android phone", () => {
  test("its QR code reads back as the tunnel the WireGuard app imports; no profile; no wipe", async () => {
    const org = await t.createOrganization();
    const added = await t.request("POST", PHONES, {
      token: org.adminToken,
      body: { device_name: "Pixel", platform: "android" },
    });
    expect(added.status).toBe(201);
    expect(added.body.profile_link).toBeNull();
    const id = added.body.device.id;
    const config = await t.request("GET", `/api/v1/devices/${id}/vpn-config`, { token: org.adminToken });
    expect(config.status).toBe(200);
    expect(config.body.private_key_included).toBe(true);
    const scanned = scanQr(config.body.qr_svg);
    expect(scanned).toBe(config.body.wg_quick);
    const tunnel = wgQuickStrip(scanned);
    expect(wgPubkey(tunnel[0]?.values.PrivateKey ?? "")).toBe(added.body.device.vpn_public_key);

    const profile = await t.request("GET", `/api/v1/devices/${id}/profile`, { token: org.adminToken });
    expect(profile.status).toBe(409);
    expect(profile.body.reason).toBe("profile_ios_only");
    const wipe = await t.request("POST", `/api/v1/devices/${id}/wipe`, {
      token: org.adminToken,
      body: { reason: "lost" },
    });
    expect(wipe.status).toBe(409);
    expect(wipe.body.reason).toBe("wipe_needs_agent");

    // Suspension cuts the tunnel; releasing it goes back to pending, never to a claimed online.
    const suspended = await t.request("PUT", `/api/v1/devices/${id}/status`, {
      token: org.adminToken,
      body: { status: "suspended", reason: "lost" },
    });
    expect(suspended.status).toBe(200);
    const peers = await t.request("GET", "/api/v1/vpn/server-config", { token: org.adminToken });
    expect(peers.body.peers.map((peer: { device_id: string }) => peer.device_id)).not.toContain(id);
    const released = await t.request("PUT", `/api/v1/devices/${id}/status`, {
      token: org.adminToken,
      body: { status: "online" },
    });
    expect(released.body.status).toBe("pending");
  });
});

describe("refusals", () => {
  test("bad input, other organizations' devices and agents' devices get clear errors", async () => {
    const org = await t.createOrganization();
    const other = await t.createOrganization();
    for (const body of [
      { device_name: "x", platform: "linux" },
      { device_name: "", platform: "ios" },
      { device_name: "x", platform: "ios", public_key: "not-a-key" },
      { platform: "ios" },
    ]) {
      const refused = await t.request("POST", PHONES, { token: org.adminToken, body });
      expect({ body, status: refused.status, reason: refused.body.reason }).toEqual({
        body,
        status: 400,
        reason: "validation_failed",
      });
    }
    const unknownPolicy = await t.request("POST", PHONES, {
      token: org.adminToken,
      body: { device_name: "x", platform: "ios", policy_id: crypto.randomUUID() },
    });
    expect(unknownPolicy.status).toBe(404);

    const agent = await enrollDevice(t, org.adminToken);
    const notPhone = await t.request("GET", `/api/v1/devices/${agent.id}/vpn-config`, {
      token: org.adminToken,
    });
    expect(notPhone.status).toBe(409);
    expect(notPhone.body.reason).toBe("device_not_vpn_profile");

    const phone = await t.request("POST", PHONES, {
      token: org.adminToken,
      body: { device_name: "x", platform: "android" },
    });
    const foreign = await t.request("GET", `/api/v1/devices/${phone.body.device.id}/vpn-config`, {
      token: other.adminToken,
    });
    expect(foreign.status).toBe(404);
    const unknownLink = await t.fetch("/api/v1/phone-profiles/bwp_nothing", {});
    expect(unknownLink.status).toBe(404);
    expect((await unknownLink.json()).reason).toBe("profile_link_not_found");

    // The phone's own current key is no new key; a suspended iPhone gets no link that would not open.
    const iphone = (
      await t.request("POST", PHONES, { token: org.adminToken, body: { device_name: "y", platform: "ios" } })
    ).body.device;
    const same = await t.request("POST", `/api/v1/devices/${iphone.id}/vpn-key`, {
      token: org.adminToken,
      body: { public_key: iphone.vpn_public_key },
    });
    expect({ status: same.status, message: same.body.message }).toEqual({
      status: 409,
      message: "this is already the phone's key",
    });
    await t.request("PUT", `/api/v1/devices/${iphone.id}/status`, {
      token: org.adminToken,
      body: { status: "suspended", reason: "lost" },
    });
    const suspendedLink = await t.request("POST", `/api/v1/devices/${iphone.id}/profile-link`, {
      token: org.adminToken,
    });
    expect({ status: suspendedLink.status, reason: suspendedLink.body.reason }).toEqual({
      status: 409,
      reason: "device_suspended",
    });

    // A read-only key sees the phone but cannot take its key.
    const reader = await t.createApiKey(org.adminToken, ["devices:read"]);
    const denied = await t.request("GET", `/api/v1/devices/${phone.body.device.id}/vpn-config`, {
      token: reader,
    });
    expect(denied.status).toBe(403);
  });
});

describe("POST /vpn/handshakes: what the VPN host saw", () => {
  test("a phone's recent handshake makes it online with vpn_connected; an old one changes nothing; agents, other organizations and keys without vpn:report are left alone", async () => {
    const org = await t.createOrganization();
    const other = await t.createOrganization();
    const reporter = await t.createApiKey(org.adminToken, ["vpn:read", "vpn:report"]);
    const phone = (
      await t.request("POST", PHONES, {
        token: org.adminToken,
        body: { device_name: "Seen", platform: "ios" },
      })
    ).body.device;
    const quiet = (
      await t.request("POST", PHONES, {
        token: org.adminToken,
        body: { device_name: "Quiet", platform: "android" },
      })
    ).body.device;
    const foreign = (
      await t.request("POST", PHONES, {
        token: other.adminToken,
        body: { device_name: "Theirs", platform: "android" },
      })
    ).body.device;
    const agent = await enrollDevice(t, org.adminToken);
    const now = Date.parse(phone.enrolled_at);
    const at = (secondsAgo: number) => new Date(now - secondsAgo * 1000).toISOString();

    const report = await t.request("POST", "/api/v1/vpn/handshakes", {
      token: reporter,
      body: {
        handshakes: [
          { public_key: phone.vpn_public_key, latest_handshake: at(0) },
          { public_key: quiet.vpn_public_key, latest_handshake: at(3600) },
          { public_key: foreign.vpn_public_key, latest_handshake: at(0) },
          { public_key: agent.vpn_config.public_key, latest_handshake: at(0) },
        ],
      },
    });
    expect(report.status).toBe(200);
    const seen = (await t.request("GET", `/api/v1/devices/${phone.id}`, { token: org.adminToken })).body;
    expect(seen).toMatchObject({ status: "online", facts: { vpn_connected: true }, last_seen: at(0) });
    // Still unknown: a handshake says nothing of the passcode or the OS version.
    expect(seen.compliance.status).toBe("unknown");
    const stale = (await t.request("GET", `/api/v1/devices/${quiet.id}`, { token: org.adminToken })).body;
    expect(stale).toMatchObject({
      status: "pending",
      facts: { vpn_connected: false },
      last_seen: quiet.last_seen,
    });
    expect(
      (await t.request("GET", `/api/v1/devices/${foreign.id}`, { token: other.adminToken })).body.status,
    ).toBe("pending");
    const laptop = (await t.request("GET", `/api/v1/devices/${agent.id}`, { token: org.adminToken })).body;
    expect(laptop.facts).toBeNull();
    expect(report.body.updated).toBe(2);

    // The same report again changes nothing.
    const again = await t.request("POST", "/api/v1/vpn/handshakes", {
      token: reporter,
      body: { handshakes: [{ public_key: phone.vpn_public_key, latest_handshake: at(0) }] },
    });
    expect(again.body.updated).toBe(0);

    const readOnly = await t.createApiKey(org.adminToken, ["vpn:read"]);
    const refused = await t.request("POST", "/api/v1/vpn/handshakes", {
      token: readOnly,
      body: { handshakes: [] },
    });
    expect(refused.status).toBe(403);
    const malformed = await t.request("POST", "/api/v1/vpn/handshakes", {
      token: reporter,
      body: { handshakes: [{ public_key: "x", latest_handshake: "yesterday" }] },
    });
    expect(malformed.status).toBe(400);
  });
});
