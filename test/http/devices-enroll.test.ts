import { afterAll, describe, expect, test } from "bun:test";
import { createPrivateKey, createPublicKey, diffieHellman, generateKeyPairSync } from "node:crypto";
import { eq } from "drizzle-orm";
import { auditLogs } from "../../src/db/tables";
import { parseCidr, parseIpv4 } from "../../src/lib/ipv4";
import { hashSecret } from "../../src/lib/secrets";
import {
  createDeviceTestApp,
  createEnrollmentToken,
  createTestPolicy,
  enrollBody,
  enrollDevice,
  recordedEvents,
  wipeDevice,
} from "../helpers/devices";
import { inProcessTest, type TestApp } from "../helpers/test-app";

const t = await createDeviceTestApp();
// Refusals are read back from /metrics and from the audit log at the address the caller forwarded.
const audited = await createDeviceTestApp({ metrics: { enabled: true }, server: { trust_proxy: true } });
afterAll(async () => {
  await Promise.all([t.close(), audited.close()]);
});

const ENROLL = "/api/v1/devices/enroll";

/** A fresh X25519 public key in WireGuard's base64. */
function freshPublicKey(): string {
  const { publicKey } = generateKeyPairSync("x25519");
  return Buffer.from(publicKey.export({ format: "jwk" }).x as string, "base64url").toString("base64");
}

/** The X25519 public key of a raw private key, derived with node:crypto alone, in WireGuard's base64. */
function x25519PublicKeyOf(privateKeyBase64: string): string {
  const pkcs8 = Buffer.concat([
    Buffer.from("302e020100300506032b656e04220420", "hex"),
    Buffer.from(privateKeyBase64, "base64"),
  ]);
  const privateKey = createPrivateKey({ key: pkcs8, format: "der", type: "pkcs8" });
  const jwk = createPublicKey(privateKey).export({ format: "jwk" });
  return Buffer.from(jwk.x as string, "base64url").toString("base64");
}

function addressOf(cidr: string): number {
  const [address, prefix] = cidr.split("/");
  expect(prefix).toBe("32");
  const parsed = parseIpv4(address ?? "");
  if (parsed === null) throw new Error(`not an address: ${cidr}`);
  return parsed;
}

describe("POST /devices/enroll", () => {
  inProcessTest("201 with the enrollment result: VPN config, default policy and device token", async () => {
    const org = await t.createOrganization();
    const { token } = await createEnrollmentToken(t, org.adminToken);
    const body = enrollBody(token, { device_name: "Ada's MacBook", hardware_id: "C02XL0GHJGH5" });
    const response = await t.request("POST", ENROLL, { body });

    expect(response.status).toBe(201);
    const organization = await t.request("GET", "/api/v1/organizations/current", { token: org.adminToken });
    expect(structuredClone(response.body)).toEqual({
      id: expect.any(String),
      device_name: "Ada's MacBook",
      platform: "macos",
      status: "online",
      enrolled_at: t.clock.now().toISOString(),
      vpn_config: {
        endpoint: "vpn.example.com:51820",
        public_key: expect.stringMatching(/^[A-Za-z0-9+/]{43}=$/),
        private_key: expect.stringMatching(/^[A-Za-z0-9+/]{43}=$/),
        address: expect.stringMatching(/^10\.100\.\d+\.\d+\/32$/),
        server_public_key: expect.stringMatching(/^[A-Za-z0-9+/]{43}=$/),
        // The default policy does not require the VPN for all traffic: only the organization's own
        // subnet (test apps use /22s) and the server (test/http/vpn.test.ts holds them exactly).
        allowed_ips: expect.arrayContaining([expect.stringMatching(/^10\.100\.\d+\.0\/22$/)]),
        dns: [],
        persistent_keepalive: 25,
        wg_quick: expect.stringContaining("[Peer]"),
      },
      policy: { id: organization.body.default_policy_id, name: "Default policy", version: 1 },
      device_token: expect.stringMatching(/^bwd_/),
      device_token_expires_at: new Date(t.clock.now().getTime() + 365 * 86400_000).toISOString(),
    });
    expect(organization.body.device_count).toBe(1);

    const device = await t.request("GET", `/api/v1/devices/${response.body.id}`, { token: org.adminToken });
    expect(device.status).toBe(200);
    expect(structuredClone(device.body)).toMatchObject({
      organization_id: org.organizationId,
      hardware_id: "C02XL0GHJGH5",
      status: "online",
      last_seen: device.body.enrolled_at,
      vpn_ip: response.body.vpn_config.address.replace("/32", ""),
      vpn_public_key: response.body.vpn_config.public_key,
      policy_id: organization.body.default_policy_id,
      // The OS version is checked, but the facts the default policy needs are not reported yet.
      compliance: {
        status: "unknown",
        last_check: device.body.enrolled_at,
        violations: [],
        missing: [
          "storage.encryption_required",
          "network.vpn_required",
          "usb.allowed",
          "storage.external_storage_allowed",
        ],
      },
    });
    expect(JSON.stringify(device.body)).not.toContain(response.body.vpn_config.private_key);
  });

  test("the returned public key is the X25519 public key of the returned private key", async () => {
    const org = await t.createOrganization();
    for (let index = 0; index < 5; index++) {
      const enrolled = await enrollDevice(t, org.adminToken);
      const privateKey = enrolled.vpn_config.private_key ?? "";
      expect(Buffer.from(privateKey, "base64")).toHaveLength(32);
      expect(x25519PublicKeyOf(privateKey)).toBe(enrolled.vpn_config.public_key);
    }
  });

  test("a device that sends its own public key gets no private key and keeps its key", async () => {
    const org = await t.createOrganization();
    const { publicKey } = generateKeyPairSync("x25519");
    const devicePublicKey = Buffer.from(
      publicKey.export({ format: "jwk" }).x as string,
      "base64url",
    ).toString("base64");
    const enrolled = await enrollDevice(t, org.adminToken, { public_key: devicePublicKey });
    expect(enrolled.vpn_config.public_key).toBe(devicePublicKey);
    expect("private_key" in enrolled.vpn_config).toBe(false);
    const device = await t.request("GET", `/api/v1/devices/${enrolled.id}`, { token: org.adminToken });
    expect(device.body.vpn_public_key).toBe(devicePublicKey);
  });

  test("addresses are unique across many enrollments and all inside the pool", async () => {
    const org = await t.createOrganization();
    const other = await t.createOrganization();
    const pool = parseCidr("10.100.0.0/16");
    if (!pool) throw new Error("bad pool");
    const { token } = await createEnrollmentToken(t, org.adminToken, { max_uses: null });
    const { token: otherToken } = await createEnrollmentToken(t, other.adminToken, { max_uses: null });
    const addresses: number[] = [];
    for (let index = 0; index < 50; index++) {
      const response = await t.request("POST", ENROLL, { body: enrollBody(index % 2 ? token : otherToken) });
      expect(response.status).toBe(201);
      addresses.push(addressOf(response.body.vpn_config.address));
    }
    expect(new Set(addresses).size).toBe(50);
    for (const address of addresses) {
      // Not the network address, not the server's first host, not broadcast.
      expect(address).toBeGreaterThan(pool.network + 1);
      expect(address).toBeLessThan(pool.network + 65535);
    }
  });

  test("409 when the organization's subnet is exhausted, though the pool is not; deleting a wiped device frees its address", async () => {
    // Four /29s; the executable's first run makes an organization of its own, so this one may be third.
    const small = await createDeviceTestApp({
      vpn: { address_pool: "10.9.0.0/27", organization_prefix_length: 29 },
    });
    try {
      await small.createOrganization();
      const org = await small.createOrganization();
      const { token } = await createEnrollmentToken(small, org.adminToken, { max_uses: null });
      const enrolled = [];
      for (let index = 0; index < 6; index++) {
        const response = await small.request("POST", ENROLL, { body: enrollBody(token) });
        expect(response.status).toBe(201);
        enrolled.push(response.body);
      }
      // Not the pool's first block (the server's, and an older organization's): all six hosts of its own.
      const subnet = parseCidr(enrolled[0].vpn_config.allowed_ips[0]);
      if (!subnet) throw new Error("no subnet");
      expect(subnet.prefixLength).toBe(29);
      expect(subnet.network).toBeGreaterThan(addressOf("10.9.0.0/32"));
      expect(enrolled.map((device) => addressOf(device.vpn_config.address))).toEqual(
        [1, 2, 3, 4, 5, 6].map((host) => subnet.network + host),
      );
      const exhausted = await small.request("POST", ENROLL, { body: enrollBody(token) });
      expect(exhausted.status).toBe(409);
      expect(exhausted.body.reason).toBe("vpn_pool_exhausted");
      expect(exhausted.body.details).toContain(enrolled[0].vpn_config.allowed_ips[0]);
      expect(exhausted.body.details).toContain("vpn.organization_prefix_length");

      const freed = enrolled[2];
      await wipeDevice(small, org.adminToken, freed, "retired");
      const deleted = await small.request("DELETE", `/api/v1/devices/${freed.id}`, { token: org.adminToken });
      expect(deleted.status).toBe(204);
      const again = await small.request("POST", ENROLL, { body: enrollBody(token) });
      expect(again.status).toBe(201);
      expect(again.body.vpn_config.address).toBe(freed.vpn_config.address);
    } finally {
      small.close();
    }
  });

  inProcessTest("assigns the token's policy and user, and records device.enrolled", async () => {
    const org = await t.createOrganization();
    const member = await t.createUser(org.adminToken, "member");
    const policy = await createTestPolicy(t, org.adminToken, "Engineering");
    const enrolled = await enrollDevice(t, org.adminToken, {}, { policy_id: policy.id, user_id: member.id });
    expect(enrolled.policy).toEqual({ id: policy.id, name: "Engineering", version: 1 });

    const device = await t.request("GET", `/api/v1/devices/${enrolled.id}`, { token: org.adminToken });
    expect(device.body.user_id).toBe(member.id);
    expect(device.body.policy_id).toBe(policy.id);

    const [event] = await recordedEvents(t, org.organizationId, "device.enrolled");
    expect(event?.data).toEqual({
      device_id: enrolled.id,
      device_name: enrolled.device_name,
      platform: "macos",
      user_id: member.id,
      policy_id: policy.id,
    });
    const audit = await t.request("GET", "/api/v1/audit-logs?action=device.enroll", {
      token: org.adminToken,
    });
    expect(structuredClone(audit.body.data[0])).toMatchObject({
      actor: { type: "device", id: enrolled.id },
      target: { type: "device", id: enrolled.id },
    });
  });

  test("an OS version below the platform minimum makes the device non-compliant from the start", async () => {
    const org = await t.createOrganization();
    const enrolled = await enrollDevice(t, org.adminToken, { platform: "ios", os_version: "14.8" });
    const compliance = await t.request("GET", `/api/v1/devices/${enrolled.id}/compliance`, {
      token: org.adminToken,
    });
    expect(structuredClone(compliance.body)).toEqual({
      status: "non_compliant",
      last_check: expect.any(String),
      violations: [{ rule: "os_version", required: ">= 15", actual: "14.8", severity: "critical" }],
      missing: [
        "storage.encryption_required",
        "network.vpn_required",
        "usb.allowed",
        "storage.external_storage_allowed",
      ],
    });
  });

  test("409 public key already in use for a key a device not wiped holds, in any organization; free again once wiped", async () => {
    const org = await t.createOrganization();
    const other = await t.createOrganization();
    const publicKey = freshPublicKey();
    const first = await enrollDevice(t, org.adminToken, { public_key: publicKey });

    for (const admin of [org.adminToken, other.adminToken]) {
      const { token } = await createEnrollmentToken(t, admin);
      const duplicate = await t.request("POST", ENROLL, {
        body: enrollBody(token, { public_key: publicKey }),
      });
      expect(duplicate.status).toBe(409);
      expect(duplicate.body.reason).toBe("public_key_taken");
      expect(JSON.stringify(duplicate.body)).not.toContain(first.id);
    }

    await wipeDevice(t, org.adminToken, first, "reinstall");
    const reused = await enrollDevice(t, other.adminToken, { public_key: publicKey });
    expect(reused.vpn_config.public_key).toBe(publicKey);
  });

  test("one key enrolled into two organizations at once: one device gets it, the other enrollment is a 409", async () => {
    // Against replicas, HAProxy sends the two requests of a round to different servers, whose
    // enrollments (one organization's turn each) then race for the key.
    const tokens = await Promise.all(
      [await t.createOrganization(), await t.createOrganization()].map(async (org) => {
        const { token } = await createEnrollmentToken(t, org.adminToken, { max_uses: 10 });
        return token;
      }),
    );
    for (let round = 0; round < 10; round++) {
      const publicKey = freshPublicKey();
      const answers = await Promise.all(
        tokens.map((token) =>
          t.request("POST", ENROLL, { body: enrollBody(token, { public_key: publicKey }) }),
        ),
      );
      const outcomes = answers.map((answer) => `${answer.status} ${answer.body.reason ?? ""}`.trim()).sort();
      expect(outcomes).toEqual(["201", "409 public_key_taken"]);
    }
  });

  test("400 naming public_key for a low-order X25519 point, whatever its top bit", async () => {
    const org = await t.createOrganization();
    const { token } = await createEnrollmentToken(t, org.adminToken);
    const lowOrderPoints = [
      "00".repeat(32),
      `01${"00".repeat(31)}`,
      "e0eb7a7c3b41b8ae1656e3faf19fc46ada098deb9c32b1fd866205165f49b800",
      "5f9c95bca3508c24b1d0b1559c83ef5b04445cc4581c8e86d8224eddd09f1157",
      `ec${"ff".repeat(30)}7f`,
      `ed${"ff".repeat(30)}7f`,
      `ee${"ff".repeat(30)}7f`,
      `${"00".repeat(31)}80`,
      `ee${"ff".repeat(31)}`,
    ];
    const { privateKey } = generateKeyPairSync("x25519");
    for (const hex of lowOrderPoints) {
      const point = Buffer.from(hex, "hex");
      // Each point really is of low order: X25519 with it yields the all-zero secret, which is refused.
      const peer = createPublicKey({
        key: { kty: "OKP", crv: "X25519", x: point.toString("base64url") },
        format: "jwk",
      });
      expect(() => diffieHellman({ privateKey, publicKey: peer }), hex).toThrow();
      const response = await t.request("POST", ENROLL, {
        body: enrollBody(token, { public_key: point.toString("base64") }),
      });
      expect(response.status, hex).toBe(400);
      expect(response.body.errors[0]).toMatchObject({
        field: "public_key",
        message: expect.stringContaining("low-order"),
      });
    }
    // The token was never used.
    expect(
      (await t.request("POST", ENROLL, { body: enrollBody(token, { public_key: freshPublicKey() }) })).status,
    ).toBe(201);
  });

  test("409 for a hardware_id already enrolled in the organization; other organizations and wiped devices do not count", async () => {
    const org = await t.createOrganization();
    const other = await t.createOrganization();
    const first = await enrollDevice(t, org.adminToken, { hardware_id: "SERIAL-1" });

    const { token } = await createEnrollmentToken(t, org.adminToken);
    const duplicate = await t.request("POST", ENROLL, {
      body: enrollBody(token, { hardware_id: "SERIAL-1" }),
    });
    expect(duplicate.status).toBe(409);
    expect(duplicate.body.reason).toBe("hardware_id_enrolled");
    // The way out: retire the device that holds it.
    expect(duplicate.body.details).toContain(`POST /api/v1/devices/${first.id}/retire`);
    // The refused enrollment did not use the token up.
    const tokens = await t.request("GET", "/api/v1/enrollment-tokens", { token: org.adminToken });
    expect(tokens.body.data[0].uses).toBe(0);

    await enrollDevice(t, other.adminToken, { hardware_id: "SERIAL-1" });

    await wipeDevice(t, org.adminToken, first, "reinstall");
    const reenrolled = await t.request("POST", ENROLL, {
      body: enrollBody(token, { hardware_id: "SERIAL-1" }),
    });
    expect(reenrolled.status).toBe(201);
  });

  inProcessTest("401 saying why for an unknown, used-up, expired or revoked enrollment token", async () => {
    const org = await t.createOrganization();
    const unknown = await t.request("POST", ENROLL, { body: enrollBody("bwe_nonsense") });
    expect(unknown.status).toBe(401);
    expect(unknown.body).toMatchObject({
      code: 401,
      reason: "enrollment_token_unknown",
      details: "the enrollment token is unknown",
    });

    const single = await createEnrollmentToken(t, org.adminToken);
    expect((await t.request("POST", ENROLL, { body: enrollBody(single.token) })).status).toBe(201);
    const usedUp = await t.request("POST", ENROLL, { body: enrollBody(single.token) });
    expect(usedUp.status).toBe(401);
    expect(usedUp.body.details).toBe("the enrollment token has reached its maximum number of uses");

    const twice = await createEnrollmentToken(t, org.adminToken, { max_uses: 2 });
    expect((await t.request("POST", ENROLL, { body: enrollBody(twice.token) })).status).toBe(201);
    expect((await t.request("POST", ENROLL, { body: enrollBody(twice.token) })).status).toBe(201);
    expect((await t.request("POST", ENROLL, { body: enrollBody(twice.token) })).status).toBe(401);

    const shortLived = await createEnrollmentToken(t, org.adminToken, { expires_in_hours: 1 });
    t.clock.advanceSeconds(3600);
    const expired = await t.request("POST", ENROLL, { body: enrollBody(shortLived.token) });
    expect(expired.status).toBe(401);
    expect(expired.body.details).toBe("the enrollment token has expired");

    const revokedToken = await createEnrollmentToken(t, org.adminToken);
    await t.request("DELETE", `/api/v1/enrollment-tokens/${revokedToken.id}`, { token: org.adminToken });
    const revoked = await t.request("POST", ENROLL, { body: enrollBody(revokedToken.token) });
    expect(revoked.status).toBe(401);
    expect(revoked.body.details).toBe("the enrollment token has been revoked");

    const list = await t.request("GET", "/api/v1/devices", { token: org.adminToken });
    expect(list.body.total).toBe(3);
  });

  test("400 naming each invalid or missing field, and nothing is enrolled", async () => {
    const org = await t.createOrganization();
    const { token } = await createEnrollmentToken(t, org.adminToken);
    const cases: [Record<string, unknown>, string][] = [
      [{ enrollment_token: undefined }, "enrollment_token"],
      [{ enrollment_token: "" }, "enrollment_token"],
      [{ device_name: undefined }, "device_name"],
      [{ device_name: "" }, "device_name"],
      [{ device_name: "   " }, "device_name"],
      [{ device_name: "bad\u0007name" }, "device_name"],
      [{ device_name: "x".repeat(201) }, "device_name"],
      [{ platform: undefined }, "platform"],
      [{ platform: "beos" }, "platform"],
      [{ agent_version: undefined }, "agent_version"],
      [{ agent_version: "1".repeat(51) }, "agent_version"],
      [{ hardware_id: undefined }, "hardware_id"],
      [{ hardware_id: "" }, "hardware_id"],
      [{ hardware_id: " padded " }, "hardware_id"],
      [{ hardware_id: "tab\there" }, "hardware_id"],
      [{ hardware_id: "x".repeat(201) }, "hardware_id"],
      [{ os_version: "" }, "os_version"],
      [{ public_key: "not-a-key" }, "public_key"],
      [{ public_key: `${"A".repeat(42)}B=` }, "public_key"],
    ];
    for (const [overrides, field] of cases) {
      const response = await t.request("POST", ENROLL, { body: enrollBody(token, overrides) });
      expect(response.status, JSON.stringify(overrides)).toBe(400);
      expect(response.body.errors.map((error: { field: string }) => error.field)).toContain(field);
    }
    const platform = await t.request("POST", ENROLL, { body: enrollBody(token, { platform: "beos" }) });
    expect(platform.body.errors[0].message).toBe("must be one of linux, windows, macos, android, ios");
    const malformed = await t.request("POST", ENROLL, { rawBody: "{not json" });
    expect(malformed.status).toBe(400);
    expect(malformed.body.reason).toBe("invalid_json");

    // The token was never used, so it still enrolls.
    expect((await t.request("POST", ENROLL, { body: enrollBody(token) })).status).toBe(201);
  });
});

/** bulwark_enrollments_refused_total for `reason`, added up over every server (each replica counts its own). */
async function refusalsCounted(app: TestApp, reason: string): Promise<number> {
  const texts = await Promise.all(
    (await app.fetchEach("/metrics")).map(async (response) => {
      expect(response.status).toBe(200);
      return response.text();
    }),
  );
  const series = `bulwark_enrollments_refused_total{reason="${reason}"} `;
  return texts.reduce((sum, text) => {
    const line = text.split("\n").find((each) => each.startsWith(series));
    return sum + (line ? Number(line.slice(series.length)) : 0);
  }, 0);
}

let addressCounter = 0;

/**
 * Sends an enrollment that the server refuses with `status` and `reason`, from an address of its own,
 * and returns that address after checking that the refusal was counted once in /metrics.
 */
async function refuseEnrollment(
  body: Record<string, unknown>,
  status: number,
  reason: string,
): Promise<string> {
  const address = `198.51.100.${++addressCounter}`;
  const before = await refusalsCounted(audited, reason);
  const refused = await audited.request("POST", ENROLL, { body, headers: { "x-forwarded-for": address } });
  expect(refused.status).toBe(status);
  expect(refused.body.reason).toBe(reason);
  expect(await refusalsCounted(audited, reason)).toBe(before + 1);
  return address;
}

/** The organization's failed device.enroll entries from `address`, as its admin reads them. */
async function refusalEntries(adminToken: string, address: string) {
  const audit = await audited.request("GET", "/api/v1/audit-logs?action=device.enroll&outcome=failure", {
    token: adminToken,
  });
  expect(audit.status).toBe(200);
  return (audit.body.data as { ip: string | null }[]).filter((entry) => entry.ip === address);
}

/** Neither the enrollment token nor its digest appears anywhere in `entries`. */
function expectNoSecret(entries: unknown, token: string) {
  const text = JSON.stringify(entries);
  expect(text).not.toContain(token);
  expect(text).not.toContain(hashSecret(token));
}

describe("refused enrollments are audited and counted", () => {
  for (const kind of ["used_up", "revoked"] as const) {
    test(`a ${kind.replace("_", "-")} token: a device.enroll failure with the reason and the address, counted in /metrics`, async () => {
      const org = await audited.createOrganization();
      const { id, token } = await createEnrollmentToken(audited, org.adminToken);
      if (kind === "used_up") {
        expect((await audited.request("POST", ENROLL, { body: enrollBody(token) })).status).toBe(201);
      } else {
        const revoke = await audited.request("DELETE", `/api/v1/enrollment-tokens/${id}`, {
          token: org.adminToken,
        });
        expect(revoke.status).toBe(204);
      }
      const body = enrollBody(token, { hardware_id: `HW-${kind}` });
      const address = await refuseEnrollment(body, 401, `enrollment_token_${kind}`);

      const entries = await refusalEntries(org.adminToken, address);
      expect(entries).toHaveLength(1);
      expect(structuredClone(entries[0])).toMatchObject({
        action: "device.enroll",
        outcome: "failure",
        actor: { type: "anonymous", id: null, label: body.device_name },
        target: { type: "enrollment_token", id },
        ip: address,
        details: { reason: `enrollment_token_${kind}`, hardware_id: `HW-${kind}`, platform: "macos" },
      });
      expectNoSecret(entries, token);
    });
  }

  inProcessTest(
    "an expired token: a device.enroll failure with the reason and the address, counted in /metrics",
    async () => {
      const org = await audited.createOrganization();
      const { id, token } = await createEnrollmentToken(audited, org.adminToken, { expires_in_hours: 1 });
      audited.clock.advanceSeconds(3600);
      const address = await refuseEnrollment(enrollBody(token), 401, "enrollment_token_expired");

      const entries = await refusalEntries(org.adminToken, address);
      expect(entries).toHaveLength(1);
      expect(structuredClone(entries[0])).toMatchObject({
        outcome: "failure",
        target: { type: "enrollment_token", id },
        details: { reason: "enrollment_token_expired" },
      });
      expectNoSecret(entries, token);
    },
  );

  test("a hardware_id already enrolled: a device.enroll failure naming the device that holds it, counted in /metrics", async () => {
    const org = await audited.createOrganization();
    const first = await enrollDevice(audited, org.adminToken, { hardware_id: "SERIAL-AUDITED" });
    const { id, token } = await createEnrollmentToken(audited, org.adminToken);
    const address = await refuseEnrollment(
      enrollBody(token, { hardware_id: "SERIAL-AUDITED" }),
      409,
      "hardware_id_enrolled",
    );

    const entries = await refusalEntries(org.adminToken, address);
    expect(entries).toHaveLength(1);
    expect(structuredClone(entries[0])).toMatchObject({
      outcome: "failure",
      actor: { type: "anonymous" },
      target: { type: "enrollment_token", id },
      details: { reason: "hardware_id_enrolled", hardware_id: "SERIAL-AUDITED", device_id: first.id },
    });
    expectNoSecret(entries, token);
    // The refusal was rolled back (the token is unused), its audit entry was not.
    const tokens = await audited.request("GET", "/api/v1/enrollment-tokens", { token: org.adminToken });
    expect(tokens.body.data.find((each: { id: string }) => each.id === id).uses).toBe(0);
  });

  test("an unknown token: counted in /metrics, and in no organization's audit log (it belongs to none)", async () => {
    const org = await audited.createOrganization();
    const token = `bwe_${crypto.randomUUID()}`;
    const address = await refuseEnrollment(enrollBody(token), 401, "enrollment_token_unknown");
    expect(await refusalEntries(org.adminToken, address)).toEqual([]);
  });

  inProcessTest(
    "an unknown token: a device.enroll failure without organization, with the reason and the address",
    async () => {
      const token = `bwe_${crypto.randomUUID()}`;
      const body = enrollBody(token);
      const address = await refuseEnrollment(body, 401, "enrollment_token_unknown");

      const rows = await audited.deps.db.select().from(auditLogs).where(eq(auditLogs.ip, address));
      expect(rows).toHaveLength(1);
      expect(rows[0]).toMatchObject({
        organizationId: null,
        actorType: "anonymous",
        actorLabel: body.device_name,
        action: "device.enroll",
        outcome: "failure",
        targetType: null,
        targetId: null,
        details: { reason: "enrollment_token_unknown", hardware_id: body.hardware_id, platform: "macos" },
      });
      expectNoSecret(rows, token);
    },
  );
});
